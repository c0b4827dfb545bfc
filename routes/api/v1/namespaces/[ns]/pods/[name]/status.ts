import { factory } from '#lib/http/factory.ts';
import { param } from '#lib/http/params.ts';
import { patchPodStatus } from '#lib/http/pod-writes.ts';
import { notFound } from '#lib/kube/status.ts';

/** A pod's status subresource: the whole pod, as the API server serves it. */
export const GET = factory.createHandlers((c) => {
  const name = param(c, 'name');
  const found = c.var.store.pods.getEncoded(param(c, 'ns'), name);
  if (!found) throw notFound('pods', name);
  return c.body(found.json, 200, { 'Content-Type': 'application/json' });
});

/** Patch a pod's status (conditions of readiness gates, for instance). */
export const PATCH = factory.createHandlers((c) =>
  patchPodStatus(c, param(c, 'ns'), param(c, 'name'), false),
);

/** Replace a pod's status. */
export const PUT = factory.createHandlers((c) => patchPodStatus(c, param(c, 'ns'), param(c, 'name'), true));
