// The Node object Outpost registers and the status it reports, as pure functions: what kubelet
// would send for the same host, and a fingerprint that ignores heartbeat times, so status is
// patched only when something an operator would see changed (or every 5 minutes).
import { compareGoStrings } from '#lib/kube/order.ts';
import { OUTPOST_VERSION } from '#lib/version.ts';
import type { HostFacts } from './host.ts';

export type ConditionType = 'Ready' | 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

export interface NodeCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

export interface NodeStatus {
  conditions: NodeCondition[];
  addresses: { type: string; address: string }[];
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
  nodeInfo: Record<string, string>;
  daemonEndpoints: { kubeletEndpoint: { Port: number } };
}

/** A Node as the API server returns it (the parts Outpost reads). */
export interface NodeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: Record<string, unknown>;
  status?: Partial<NodeStatus>;
}

export interface NodeReport {
  host: HostFacts;
  /** Whether pods can run (the container runtime answers); false makes Ready False. */
  runtimeReady: boolean;
  runtimeMessage?: string;
  /** `containerd://1.6.20` (CRI Version: runtime name and version). */
  runtimeVersion: string;
  /** The port of Outpost's local API (daemonEndpoints.kubeletEndpoint). */
  port: number;
  maxPods?: number;
  /** Metabase writes fail for lack of space (DiskPressure=True whatever the disk's fill level). */
  metabaseFull?: { dataDir: string; free: number } | undefined;
}

/** Labels kubelet sets that NodeRestriction lets a node set on itself. */
export function nodeLabels(name: string, host: HostFacts): Record<string, string> {
  return {
    'kubernetes.io/hostname': name,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': host.architecture,
    'beta.kubernetes.io/os': 'linux',
    'beta.kubernetes.io/arch': host.architecture,
  };
}

const MEMORY_PRESSURE_BYTES = 100 * 1024 * 1024;
const ki = (bytes: number) => `${Math.floor(bytes / 1024)}Ki`;

// kubelet's reasons and messages, with "outpost" for "kubelet" in the messages.
const PRESSURE: Record<Exclude<ConditionType, 'Ready'>, [string, string, string, string]> = {
  MemoryPressure: [
    'KubeletHasInsufficientMemory',
    'outpost has insufficient memory available',
    'KubeletHasSufficientMemory',
    'outpost has sufficient memory available',
  ],
  DiskPressure: [
    'KubeletHasDiskPressure',
    'outpost has disk pressure',
    'KubeletHasNoDiskPressure',
    'outpost has no disk pressure',
  ],
  PIDPressure: [
    'KubeletHasInsufficientPID',
    'outpost has insufficient PID available',
    'KubeletHasSufficientPID',
    'outpost has sufficient PID available',
  ],
};

function condition(type: Exclude<ConditionType, 'Ready'>, pressed: boolean): NodeCondition {
  const [onReason, onMessage, offReason, offMessage] = PRESSURE[type];
  return pressed
    ? { type, status: 'True', reason: onReason, message: onMessage }
    : { type, status: 'False', reason: offReason, message: offMessage };
}

/** The status to report, without timestamps (see stampConditions). */
export function desiredStatus(r: NodeReport, name: string): NodeStatus {
  const h = r.host;
  const capacity = {
    cpu: String(h.cpu),
    memory: ki(h.memoryBytes),
    pods: String(r.maxPods ?? 110),
    'ephemeral-storage': ki(h.diskBytes),
  };
  const conditions: NodeCondition[] = [
    condition('MemoryPressure', h.memoryAvailableBytes > 0 && h.memoryAvailableBytes < MEMORY_PRESSURE_BYTES),
    r.metabaseFull
      ? {
          type: 'DiskPressure',
          status: 'True',
          reason: PRESSURE.DiskPressure[0],
          message: `outpost cannot write its metabase: no space left in ${r.metabaseFull.dataDir} (${Math.max(0, r.metabaseFull.free)} bytes free)`,
        }
      : condition('DiskPressure', h.diskBytes > 0 && h.diskAvailableBytes < h.diskBytes * 0.1),
    condition('PIDPressure', h.pidsMax > 0 && h.pidsUsed > h.pidsMax * 0.9),
    r.runtimeReady
      ? { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'outpost is posting ready status' }
      : {
          type: 'Ready',
          status: 'False',
          reason: 'KubeletNotReady',
          message: `container runtime is down: ${r.runtimeMessage ?? 'not answering'}`,
        },
  ];
  return {
    conditions,
    addresses: [
      ...(h.internalIP ? [{ type: 'InternalIP', address: h.internalIP }] : []),
      { type: 'Hostname', address: name },
    ],
    capacity,
    allocatable: { ...capacity },
    nodeInfo: {
      machineID: h.machineID,
      systemUUID: h.systemUUID,
      bootID: h.bootID,
      kernelVersion: h.kernelVersion,
      osImage: h.osImage,
      containerRuntimeVersion: r.runtimeVersion,
      kubeletVersion: `v${OUTPOST_VERSION}-outpost`,
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: h.architecture,
    },
    daemonEndpoints: { kubeletEndpoint: { Port: r.port } },
  };
}

/**
 * What a status patch would change, as a string: conditions by type/status/reason, addresses,
 * capacity, allocatable, nodeInfo, daemon port. Heartbeat and transition times do not count.
 */
export function statusFingerprint(s: Partial<NodeStatus> | undefined): string {
  if (!s) return '';
  const conditions = [...(s.conditions ?? [])]
    .map((c) => `${c.type}=${c.status}/${c.reason ?? ''}`)
    .sort()
    .join(',');
  const sorted = (o: Record<string, string> | undefined) =>
    Object.entries(o ?? {})
      .sort(([a], [b]) => compareGoStrings(a, b))
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
  return JSON.stringify([
    conditions,
    (s.addresses ?? []).map((a) => `${a.type}=${a.address}`).join(','),
    sorted(s.capacity),
    sorted(s.allocatable),
    sorted(s.nodeInfo),
    s.daemonEndpoints?.kubeletEndpoint?.Port ?? 0,
  ]);
}

/** Kubernetes time (RFC 3339, seconds). */
export const rfc3339 = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}Z`;

/**
 * Adds heartbeat times (now) and transition times (kept from `previous` when the status did
 * not change, now otherwise), as kubelet does.
 */
export function stampConditions(
  next: NodeCondition[],
  previous: NodeCondition[] | undefined,
  now: number,
): NodeCondition[] {
  const t = rfc3339(now);
  return next.map((c) => {
    const before = previous?.find((p) => p.type === c.type);
    const kept = before && before.status === c.status && before.lastTransitionTime;
    return { ...c, lastHeartbeatTime: t, lastTransitionTime: kept || t };
  });
}

/** The strategic-merge patch of `nodes/status` kubelet sends (with the element-order directives). */
export function statusPatch(status: NodeStatus): Record<string, unknown> {
  return {
    status: {
      ...status,
      '$setElementOrder/conditions': status.conditions.map((c) => ({ type: c.type })),
      '$setElementOrder/addresses': status.addresses.map((a) => ({ type: a.type })),
    },
  };
}
