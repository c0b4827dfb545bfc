import { factory, query } from '#lib/http/factory.ts';
import { param } from '#lib/http/params.ts';
import { logQuery, serveContainerLog } from '#lib/http/pod-log.ts';
import { notFound } from '#lib/kube/status.ts';
import { logContainer } from '#lib/pods/logs/locate.ts';

/** A container's log as `kubectl logs` reads it (see serveContainerLog). */
export const GET = factory.createHandlers(query(logQuery), async (c) => {
  const q = c.req.valid('query');
  const name = param(c, 'name');
  const pod = c.var.store.pods.get(param(c, 'ns'), name);
  if (!pod) throw notFound('pods', name);
  return serveContainerLog(c, pod, logContainer(pod, q.container), q);
});
