import { factory, query } from '#lib/http/factory.ts';
import { listOrWatch, listQuery } from '#lib/http/list.ts';
import { configMaps, createObject, deleteObjects, objectsResource } from '#lib/http/objects.ts';
import { param } from '#lib/http/params.ts';
import { writeQuery } from '#lib/http/write-options.ts';

/** List or watch the ConfigMaps of one namespace. */
export const GET = factory.createHandlers(query(listQuery), (c) =>
  listOrWatch(c, objectsResource(c.var.store, configMaps), param(c, 'ns'), c.req.valid('query')),
);

/** Create one (kubectl create, apply). */
export const POST = factory.createHandlers(query(writeQuery), (c) =>
  createObject(c, configMaps, param(c, 'ns')),
);

/** Delete those the selectors match (deletecollection). */
export const DELETE = factory.createHandlers((c) => deleteObjects(c, configMaps, param(c, 'ns')));
