// The node's Lease in kube-node-lease, renewed as kubelet does: PUT with the last
// resourceVersion (a stale one answers 409: GET and retry once), created on 404 with the Node as
// owner. renewTime is a MicroTime (six fractional digits).
import { ApiError, type CloudContext } from './context.ts';
import type { NodeObject } from './node-status.ts';

export interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: {
    name: string;
    namespace: string;
    resourceVersion?: string;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string }[];
  };
  spec: { holderIdentity: string; leaseDurationSeconds: number; renewTime: string };
}

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
export const microTime = (ms: number): string => `${new Date(ms).toISOString().slice(0, 23)}000Z`;

export interface LeaseKeeper {
  /** Renews (or creates) the Lease now; throws ApiError / UnreachableError. */
  renew(node: NodeObject | undefined, signal: AbortSignal): Promise<void>;
  /** The Lease as last written. */
  current(): Lease | undefined;
}

/** Keeps `kube-node-lease/<node>` fresh. */
export function newLeaseKeeper(ctx: CloudContext, durationSeconds: number): LeaseKeeper {
  const name = ctx.nodeName;
  const path = `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${encodeURIComponent(name)}`;
  let lease: Lease | undefined;
  const body = (node: NodeObject | undefined, rv?: string): Lease => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name,
      namespace: 'kube-node-lease',
      ...(rv ? { resourceVersion: rv } : {}),
      ...(node?.metadata.uid
        ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata.uid }] }
        : {}),
    },
    spec: {
      holderIdentity: name,
      leaseDurationSeconds: durationSeconds,
      renewTime: microTime(ctx.clock.now()),
    },
  });
  const fetchCurrent = (signal: AbortSignal) =>
    ctx.request<Lease>(path, { signal }).catch((e) => {
      if (e instanceof ApiError && e.code === 404) return undefined;
      throw e;
    });
  const create = (node: NodeObject | undefined, signal: AbortSignal) =>
    ctx.request<Lease>('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
      method: 'POST',
      signal,
      body: body(node),
    });
  const put = (node: NodeObject | undefined, rv: string, signal: AbortSignal) =>
    ctx.request<Lease>(path, { method: 'PUT', signal, body: body(node, rv) });

  return {
    current: () => lease,
    async renew(node, signal) {
      if (!lease) {
        const found = await fetchCurrent(signal);
        lease = found
          ? await put(node, found.metadata.resourceVersion ?? '', signal)
          : await create(node, signal);
        return;
      }
      try {
        lease = await put(node, lease.metadata.resourceVersion ?? '', signal);
      } catch (e) {
        if (!(e instanceof ApiError) || (e.code !== 409 && e.code !== 404)) throw e;
        const found = await fetchCurrent(signal);
        lease = found
          ? await put(node, found.metadata.resourceVersion ?? '', signal)
          : await create(node, signal);
      }
    },
  };
}
