import { deviceModelsResource } from '#lib/http/devices.ts';
import { factory, query } from '#lib/http/factory.ts';
import { listOrWatch, listQuery } from '#lib/http/list.ts';

/** List or watch device models in every namespace. */
export const GET = factory.createHandlers(query(listQuery), (c) =>
  listOrWatch(c, deviceModelsResource(c.var.store), undefined, c.req.valid('query')),
);
