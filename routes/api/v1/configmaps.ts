import { factory, query } from '#lib/http/factory.ts';
import { listOrWatch, listQuery } from '#lib/http/list.ts';
import { configMaps, objectsResource } from '#lib/http/objects.ts';

/** List or watch ConfigMaps in every namespace. */
export const GET = factory.createHandlers(query(listQuery), (c) =>
  listOrWatch(c, objectsResource(c.var.store, configMaps), undefined, c.req.valid('query')),
);
