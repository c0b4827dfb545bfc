import { factory, query } from '#lib/http/factory.ts';
import { listOrWatch, listQuery } from '#lib/http/list.ts';
import { podsResource } from '#lib/http/resources.ts';

/** List or watch pods in every namespace (`kubectl get pods -A`). */
export const GET = factory.createHandlers(query(listQuery), (c) =>
  listOrWatch(c, podsResource(c.get('store')), undefined, c.req.valid('query')),
);
