import type { PodSandboxConfig, PortMapping } from '#lib/cri/types.ts';
import type { Pod } from '#lib/kube/types.ts';
import { MANAGED_BY, POD_NAME, POD_NAMESPACE, POD_UID, SPEC_HASH } from '../runtime/labels.ts';

/**
 * The CRI sandbox for a pod. A pod with `hostNetwork: true` shares the node's network namespace
 * and gets no hostname (runc cannot set one without a private UTS namespace); any other pod gets a
 * network namespace of its own, which the runtime's CNI setup gives an address (PodSandboxStatus
 * network.ip), its hostname, and its containers' `hostPort`s as port mappings.
 */
export function buildSandboxConfig(
  pod: Pod,
  opts: { attempt: number; logDirectory: string; specHash: string; managedBy: string },
): PodSandboxConfig {
  const { name = '', namespace = 'default', uid = '' } = pod.metadata;
  const pidShared = pod.spec.shareProcessNamespace === true;
  const hostNetwork = isHostNetwork(pod);
  const config: PodSandboxConfig = {
    metadata: { name, namespace, uid, attempt: opts.attempt },
    logDirectory: opts.logDirectory,
    labels: { ...(pod.metadata.labels ?? {}), [POD_NAME]: name, [POD_NAMESPACE]: namespace, [POD_UID]: uid },
    annotations: {
      ...(pod.metadata.annotations ?? {}),
      'kubernetes.io/config.source': 'outpost',
      [SPEC_HASH]: opts.specHash,
      [MANAGED_BY]: opts.managedBy,
    },
    linux: {
      securityContext: {
        namespaceOptions: {
          network: hostNetwork ? 'NODE' : 'POD',
          pid: pidShared ? 'POD' : 'CONTAINER',
          ipc: 'POD',
        },
      },
    },
  };
  if (!hostNetwork) {
    config.hostname = podHostname(pod);
    const mappings = portMappings(pod);
    if (mappings.length) config.portMappings = mappings;
  }
  return config;
}

/** Whether the pod runs in the node's network namespace (`spec.hostNetwork: true`). */
export const isHostNetwork = (pod: Pod): boolean => pod.spec.hostNetwork === true;

/** kubelet's GeneratePodHostNameAndDomain without a subdomain: spec.hostname or the pod's name, at most 63 characters. */
function podHostname(pod: Pod): string {
  const h =
    typeof pod.spec.hostname === 'string' && pod.spec.hostname ? pod.spec.hostname : pod.metadata.name;
  return (h ?? '').slice(0, 63).replace(/[-.]+$/, '');
}

interface ContainerPort {
  containerPort?: number;
  hostPort?: number;
  hostIP?: string;
  protocol?: string;
}

/** The containers' ports that name a `hostPort`, as CRI port mappings (kubelet's makePortMappings). */
export function portMappings(pod: Pod): PortMapping[] {
  const out: PortMapping[] = [];
  const seen = new Set<string>();
  for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
    for (const p of (c.ports as ContainerPort[] | undefined) ?? []) {
      if (!p.hostPort || !p.containerPort) continue;
      const protocol = (p.protocol ?? 'TCP') as NonNullable<PortMapping['protocol']>;
      const key = `${protocol}/${p.hostIP ?? ''}/${p.hostPort}`;
      if (seen.has(key)) continue; // kubelet drops duplicates of the same host port
      seen.add(key);
      out.push({
        protocol,
        containerPort: p.containerPort,
        hostPort: p.hostPort,
        ...(p.hostIP ? { hostIp: p.hostIP } : {}),
      });
    }
  }
  return out;
}

/** Whether the pod is system-critical (recovered first after a reboot). */
export function isCritical(pod: Pod): boolean {
  const cls = pod.spec.priorityClassName;
  return (
    cls === 'system-node-critical' ||
    cls === 'system-cluster-critical' ||
    Number(pod.spec.priority ?? 0) >= 2_000_000_000
  );
}
