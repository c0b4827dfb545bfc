import { unavailable } from '#lib/kube/status.ts';
import type { StatsCollector } from '#lib/pods/runtime/stats.ts';
import type { NodeApiContext } from '../env.ts';

export function requireStats(c: NodeApiContext): StatsCollector {
  if (!c.var.stats) throw unavailable('no container runtime is configured on this node');
  return c.var.stats;
}

/** `GET /stats/summary`: node, pod and container usage (stats/v1alpha1 Summary), from CRI stats. */
export async function GET(c: NodeApiContext) {
  return c.json(await requireStats(c).summary(c.var.shutdown));
}
