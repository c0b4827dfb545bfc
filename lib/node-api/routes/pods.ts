import type { NodeApiContext } from '../env.ts';

/** `GET /pods`: the pods this node runs, as a v1 PodList (what kubelet's `/pods` answers). */
export function GET(c: NodeApiContext) {
  const items = c.var.store.pods.list().items;
  return c.json({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items });
}
