import { unavailable } from '#lib/kube/status.ts';
import type { NodeApiContext } from '../env.ts';

/** `GET /metrics`: Outpost's own Prometheus metrics (the local API's `/metrics`). */
export async function GET(c: NodeApiContext) {
  const metrics = c.var.metrics;
  if (!metrics) throw unavailable('metrics are not enabled in this server');
  return c.body(await metrics.registry.metrics(), 200, { 'Content-Type': metrics.registry.contentType });
}
