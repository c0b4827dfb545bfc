import { factory, query } from '#lib/http/factory.ts';
import { deleteObject, getObject, patchObject, replaceObject, secrets } from '#lib/http/objects.ts';
import { param } from '#lib/http/params.ts';
import { writeQuery } from '#lib/http/write-options.ts';

/** One of the Secrets (a Table row when kubectl asks for one). */
export const GET = factory.createHandlers((c) => getObject(c, secrets, param(c, 'ns'), param(c, 'name')));

/** Replace it (kubectl replace). */
export const PUT = factory.createHandlers(query(writeQuery), (c) =>
  replaceObject(c, secrets, param(c, 'ns'), param(c, 'name')),
);

/** Patch it (kubectl edit, apply, label, annotate, patch). */
export const PATCH = factory.createHandlers(query(writeQuery), (c) =>
  patchObject(c, secrets, param(c, 'ns'), param(c, 'name')),
);

/** Delete it. */
export const DELETE = factory.createHandlers((c) =>
  deleteObject(c, secrets, param(c, 'ns'), param(c, 'name')),
);
