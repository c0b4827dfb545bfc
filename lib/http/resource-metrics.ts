import { parseLabelSelector } from '#lib/kube/selectors.ts';
import { notFound, unavailable } from '#lib/kube/status.ts';
import type { Summary } from '#lib/pods/runtime/stats.ts';
import type { AppContext } from './env.ts';

const API_VERSION = 'metrics.k8s.io/v1beta1';
const cpu = (nanoCores: number | undefined) => `${Math.round(nanoCores ?? 0)}n`;
const memory = (bytes: number | undefined) => `${Math.round((bytes ?? 0) / 1024)}Ki`;

async function summary(c: AppContext): Promise<Summary> {
  if (!c.var.stats)
    throw unavailable('the Metrics API needs a container runtime: none is configured on this node');
  // The agent's shutdown cancels the runtime's lists (a 503); a client going away does not.
  return c.var.stats.summary(c.var.shutdown);
}

/** NodeMetrics for this node (`kubectl top node`), from /proc. */
export async function nodeMetrics(c: AppContext, name?: string) {
  const s = await summary(c);
  if (name !== undefined && name !== c.var.nodeName) throw notFound('nodes', name, 'metrics.k8s.io');
  const item = {
    metadata: { name: c.var.nodeName, labels: { 'kubernetes.io/hostname': c.var.nodeName } },
    timestamp: s.node.cpu.time.replace(/\.\d+Z$/, 'Z'),
    window: '10s',
    usage: { cpu: cpu(s.node.cpu.usageNanoCores), memory: memory(s.node.memory.workingSetBytes) },
  };
  if (name !== undefined) return c.json({ kind: 'NodeMetrics', apiVersion: API_VERSION, ...item });
  return c.json({ kind: 'NodeMetricsList', apiVersion: API_VERSION, metadata: {}, items: [item] });
}

/** PodMetrics (`kubectl top pod [--containers]`), from CRI container stats. */
export async function podMetrics(c: AppContext, namespace?: string, name?: string) {
  const s = await summary(c);
  const labels = parseLabelSelector(c.req.query('labelSelector') ?? '');
  const items = s.pods
    .filter(
      (p) =>
        (namespace === undefined || p.podRef.namespace === namespace) &&
        (name === undefined || p.podRef.name === name),
    )
    .flatMap((p) => {
      const pod = c.var.store.pods.get(p.podRef.namespace, p.podRef.name);
      if (!pod || !labels.matches(pod.metadata.labels)) return [];
      return [
        {
          metadata: {
            name: p.podRef.name,
            namespace: p.podRef.namespace,
            creationTimestamp: new Date(c.var.now()).toISOString().replace(/\.\d+Z$/, 'Z'),
            labels: pod.metadata.labels ?? {},
          },
          timestamp: p.cpu.time.replace(/\.\d+Z$/, 'Z'),
          window: '10s',
          containers: p.containers.map((ctr) => ({
            name: ctr.name,
            usage: { cpu: cpu(ctr.cpu.usageNanoCores), memory: memory(ctr.memory.workingSetBytes) },
          })),
        },
      ];
    });
  if (name !== undefined) {
    if (!items[0]) throw notFound('pods', name, 'metrics.k8s.io');
    return c.json({ kind: 'PodMetrics', apiVersion: API_VERSION, ...items[0] });
  }
  return c.json({ kind: 'PodMetricsList', apiVersion: API_VERSION, metadata: {}, items });
}
