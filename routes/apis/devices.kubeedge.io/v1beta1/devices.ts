import { devicesResource } from '#lib/http/devices.ts';
import { factory, query } from '#lib/http/factory.ts';
import { listOrWatch, listQuery } from '#lib/http/list.ts';

/** List or watch devices in every namespace (`kubectl get devices -A`). */
export const GET = factory.createHandlers(query(listQuery), (c) =>
  listOrWatch(c, devicesResource(c.var.store), undefined, c.req.valid('query')),
);
