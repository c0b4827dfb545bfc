import { factory, query } from '#lib/http/factory.ts';
import { wantsTable } from '#lib/http/negotiate.ts';
import { param } from '#lib/http/params.ts';
import { deleteOne } from '#lib/http/pod-delete.ts';
import { patchPod, replacePod } from '#lib/http/pod-writes.ts';
import { writeQuery } from '#lib/http/write-options.ts';
import { podTable } from '#lib/kube/printers/pods.ts';
import { notFound } from '#lib/kube/status.ts';
import { parseIncludeObject } from '#lib/kube/table.ts';

/** One pod: the stored spec with its latest status merged (a Table when kubectl asks for one). */
export const GET = factory.createHandlers((c) => {
  const name = param(c, 'name');
  const found = c.get('store').pods.getEncoded(param(c, 'ns'), name);
  if (!found) throw notFound('pods', name);
  const { pod, json } = found;
  if (wantsTable(c)) {
    const includeObject = parseIncludeObject(c.req.query('includeObject'));
    return c.json(
      podTable([pod], c.var.now(), { includeObject, resourceVersion: pod.metadata.resourceVersion }),
    );
  }
  return c.body(json, 200, { 'Content-Type': 'application/json' });
});

/** Replace a pod (kubectl replace): only API-created pods; images and a few fields may change. */
export const PUT = factory.createHandlers(query(writeQuery), (c) =>
  replacePod(c, param(c, 'ns'), param(c, 'name')),
);

/** Patch a pod: merge, strategic merge, JSON patch or server-side apply (which may create it). */
export const PATCH = factory.createHandlers(query(writeQuery), (c) =>
  patchPod(c, param(c, 'ns'), param(c, 'name')),
);

/** Delete a pod: terminated within its grace period by the lifecycle manager, then removed. */
export const DELETE = factory.createHandlers((c) => deleteOne(c, param(c, 'ns'), param(c, 'name')));
