import { factory, query } from '#lib/http/factory.ts';
import { listOrWatch, listQuery } from '#lib/http/list.ts';
import { param } from '#lib/http/params.ts';
import { podsResource } from '#lib/http/resources.ts';

/** List or watch the pods of one namespace. */
export const GET = factory.createHandlers(query(listQuery), (c) =>
  listOrWatch(c, podsResource(c.var.store), param(c, 'ns'), c.req.valid('query')),
);
