import { factory, query } from '#lib/http/factory.ts';
import { listOrWatch, listQuery } from '#lib/http/list.ts';
import { param } from '#lib/http/params.ts';
import { deleteCollection } from '#lib/http/pod-delete.ts';
import { createPod } from '#lib/http/pod-writes.ts';
import { podsResource } from '#lib/http/resources.ts';
import { writeQuery } from '#lib/http/write-options.ts';

/** List or watch the pods of one namespace. */
export const GET = factory.createHandlers(query(listQuery), (c) =>
  listOrWatch(c, podsResource(c.get('store')), param(c, 'ns'), c.req.valid('query')),
);

/** Create a pod (kubectl run, create, apply); it runs through the lifecycle manager like a manifest pod. */
export const POST = factory.createHandlers(query(writeQuery), (c) => createPod(c, param(c, 'ns')));

/** Delete the pods that match the selectors (deletecollection); refused whole if one is not API-owned. */
export const DELETE = factory.createHandlers((c) => deleteCollection(c, param(c, 'ns')));
