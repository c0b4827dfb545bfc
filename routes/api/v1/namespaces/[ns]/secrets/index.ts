import { factory, query } from '#lib/http/factory.ts';
import { listOrWatch, listQuery } from '#lib/http/list.ts';
import { createObject, deleteObjects, objectsResource, secrets } from '#lib/http/objects.ts';
import { param } from '#lib/http/params.ts';
import { writeQuery } from '#lib/http/write-options.ts';

/** List or watch the Secrets of one namespace. */
export const GET = factory.createHandlers(query(listQuery), (c) =>
  listOrWatch(c, objectsResource(c.var.store, secrets), param(c, 'ns'), c.req.valid('query')),
);

/** Create one (kubectl create, apply). */
export const POST = factory.createHandlers(query(writeQuery), (c) =>
  createObject(c, secrets, param(c, 'ns')),
);

/** Delete those the selectors match (deletecollection). */
export const DELETE = factory.createHandlers((c) => deleteObjects(c, secrets, param(c, 'ns')));
