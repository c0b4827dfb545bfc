import { resourceMetrics } from '#lib/pods/runtime/stats.ts';
import type { NodeApiContext } from '../env.ts';
import { requireStats } from './stats-summary.ts';

/** `GET /metrics/resource`: kubelet's resource metrics, what metrics-server 0.6+ scrapes. */
export async function GET(c: NodeApiContext) {
  const summary = await requireStats(c).summary(c.var.shutdown);
  return c.body(resourceMetrics(summary), 200, {
    'Content-Type': 'text/plain; version=0.0.4; charset=utf-8',
  });
}
