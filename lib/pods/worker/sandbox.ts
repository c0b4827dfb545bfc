import type { PodSandboxConfig } from '#lib/cri/types.ts';
import type { Pod } from '#lib/kube/types.ts';
import { MANAGED_BY, POD_NAME, POD_NAMESPACE, POD_UID, SPEC_HASH } from '../runtime/labels.ts';

/**
 * The CRI sandbox for a pod. Pods share the node's network namespace (no CNI here), so no
 * hostname is set: runc cannot set one without a private UTS namespace. Pod networking through
 * CNI would plug in here: drop `network: NODE`, set `hostname`, `portMappings` and `dnsConfig`,
 * and containerd's CRI plugin calls the configured CNI plugins and reports the pod IP in
 * PodSandboxStatus.network.ip.
 */
export function buildSandboxConfig(
  pod: Pod,
  opts: { attempt: number; logDirectory: string; specHash: string; managedBy: string },
): PodSandboxConfig {
  const { name = '', namespace = 'default', uid = '' } = pod.metadata;
  const pidShared = pod.spec.shareProcessNamespace === true;
  return {
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
        namespaceOptions: { network: 'NODE', pid: pidShared ? 'POD' : 'CONTAINER', ipc: 'POD' },
      },
    },
  };
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
