import { factory, query } from '#lib/http/factory.ts';
import { listOrWatch, listQuery } from '#lib/http/list.ts';
import { eventsResource } from '#lib/http/resources.ts';

/** List or watch events in every namespace. */
export const GET = factory.createHandlers(query(listQuery), (c) =>
  listOrWatch(c, eventsResource(c.var.store), undefined, c.req.valid('query')),
);
