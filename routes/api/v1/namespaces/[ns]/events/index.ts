import { factory, query } from '#lib/http/factory.ts';
import { listOrWatch, listQuery } from '#lib/http/list.ts';
import { param } from '#lib/http/params.ts';
import { eventsResource } from '#lib/http/resources.ts';

/** List or watch the events of one namespace (`kubectl describe pod` asks with a field selector). */
export const GET = factory.createHandlers(query(listQuery), (c) =>
  listOrWatch(c, eventsResource(c.var.store), param(c, 'ns'), c.req.valid('query')),
);
