import { factory, query } from '#lib/http/factory.ts';
import { listOrWatch, listQuery } from '#lib/http/list.ts';
import { objectsResource, secrets } from '#lib/http/objects.ts';

/** List or watch Secrets in every namespace. */
export const GET = factory.createHandlers(query(listQuery), (c) =>
  listOrWatch(c, objectsResource(c.var.store, secrets), undefined, c.req.valid('query')),
);
