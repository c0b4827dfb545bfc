import { factory } from '#lib/http/factory.ts';
import { unavailable } from '#lib/kube/status.ts';

/** Prometheus metrics in the text exposition format. */
export const GET = factory.createHandlers(async (c) => {
  const metrics = c.var.metrics;
  if (!metrics) throw unavailable('metrics are not enabled in this server');
  const body = await metrics.registry.metrics();
  return c.body(body, 200, { 'Content-Type': metrics.registry.contentType, 'Cache-Control': 'no-cache' });
});
