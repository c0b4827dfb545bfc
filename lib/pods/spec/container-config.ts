import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, realpathSync, statSync } from 'node:fs';
import { totalmem } from 'node:os';
import { dirname, join, posix } from 'node:path';
import type * as cri from '#lib/cri/types.ts';
import { parseQuantity, quantityMilliValue, quantityValue } from '#lib/kube/quantity.ts';
import type { Container, Pod } from '#lib/kube/types.ts';
import {
  CONTAINER_NAME,
  CONTAINER_RESTART_COUNT,
  POD_NAME,
  POD_NAMESPACE,
  POD_UID,
} from '../runtime/labels.ts';
import { qosClass } from '../runtime/status.ts';
import { ContainerConfigError, type EnvVar, expand, expandCommand } from './env.ts';

export interface ContainerConfigOptions {
  attempt: number;
  restartCount: number;
  /** Volume name → host path, from prepareVolumes. */
  volumes: Map<string, string>;
  envs: EnvVar[];
  /** Relative to the sandbox's log directory, e.g. `web/0.log`. */
  logPath: string;
  specHash: string;
  /** Node memory in bytes for the Burstable OOM score; defaults to this machine's. */
  memoryCapacity?: number;
}

interface VolumeMount {
  name: string;
  mountPath: string;
  subPath?: string;
  subPathExpr?: string;
  readOnly?: boolean;
  mountPropagation?: string;
}
type ResourceList = Record<string, string | number>;
interface SecurityContext {
  privileged?: boolean;
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
  seccompProfile?: { type: string; localhostProfile?: string };
  supplementalGroups?: number[];
  fsGroup?: number;
}

const CPU_PERIOD = 100_000; // CFS period in µs (kubelet's quotaPeriod)
const PROPAGATION: Record<string, cri.MountPropagation> = {
  None: 'PROPAGATION_PRIVATE',
  HostToContainer: 'PROPAGATION_HOST_TO_CONTAINER',
  Bidirectional: 'PROPAGATION_BIDIRECTIONAL',
};
/** Volume types kubelet always mounts read-only into containers (their Mounter attributes say ReadOnly). */
const READ_ONLY_TYPES = ['configMap', 'secret', 'downwardAPI', 'projected'];

/** JSON with object keys sorted, so equal specs hash equally whatever order their keys came in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonical(v ?? null)).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A stable hash of the pod spec (sha256 of canonical JSON, first 16 hex digits) to notice a changed spec. */
export function podSpecHash(pod: Pod): string {
  return createHash('sha256').update(canonical(pod.spec)).digest('hex').slice(0, 16);
}

function quantityOf(v: string | number, field: string, milli: boolean): number {
  try {
    const q = parseQuantity(v);
    return milli ? quantityMilliValue(q) : quantityValue(q);
  } catch (e) {
    throw new ContainerConfigError(`${field}: ${(e as Error).message}`);
  }
}

/** cgroup settings from requests and limits, as kubelet's calculateLinuxResources computes them. */
export function linuxResources(
  pod: Pod,
  container: Container,
  memoryCapacity = totalmem(),
): cri.LinuxContainerResources {
  const { requests = {}, limits = {} } = (container.resources ?? {}) as {
    requests?: ResourceList;
    limits?: ResourceList;
  };
  const cpuLimit = limits.cpu !== undefined ? quantityOf(limits.cpu, 'resources.limits.cpu', true) : 0;
  // An unset request defaults to the limit (the API server does this; kubelet repeats it).
  const cpuRequest =
    requests.cpu !== undefined ? quantityOf(requests.cpu, 'resources.requests.cpu', true) : cpuLimit;
  const shares =
    cpuRequest === 0 ? 2 : Math.min(262_144, Math.max(2, Math.floor((cpuRequest * 1024) / 1000)));
  const quota = cpuLimit === 0 ? 0 : Math.max(1000, Math.floor((cpuLimit * CPU_PERIOD) / 1000));
  const out: cri.LinuxContainerResources = { cpuShares: shares, cpuPeriod: CPU_PERIOD, cpuQuota: quota };
  const memLimit =
    limits.memory !== undefined ? quantityOf(limits.memory, 'resources.limits.memory', false) : 0;
  if (memLimit !== 0) out.memoryLimitInBytes = memLimit;
  out.oomScoreAdj = oomScoreAdj(pod, requests, memoryCapacity);
  return out;
}

/** kubelet's GetContainerOOMScoreAdjust: node-critical and Guaranteed last, BestEffort first, Burstable by request. */
function oomScoreAdj(pod: Pod, requests: ResourceList, memoryCapacity: number): number {
  if (pod.spec.priorityClassName === 'system-node-critical') return -997;
  const qos = qosClass(pod);
  if (qos === 'Guaranteed') return -997;
  if (qos === 'BestEffort') return 1000;
  const request =
    requests.memory !== undefined ? quantityOf(requests.memory, 'resources.requests.memory', false) : 0;
  const adj = 1000 - Math.floor((1000 * request) / Math.max(1, memoryCapacity));
  if (adj < 3) return 3;
  return adj === 1000 ? 999 : adj;
}

/** The CRI security context: container settings over the pod's, namespaces as the sandbox has them. */
export function securityContext(pod: Pod, container: Container): cri.LinuxContainerSecurityContext {
  const podSc = (pod.spec.securityContext ?? {}) as SecurityContext;
  const sc = (container.securityContext ?? {}) as SecurityContext;
  const ns = (host: unknown, fallback: cri.NamespaceMode): cri.NamespaceMode =>
    host === true ? 'NODE' : fallback;
  const out: cri.LinuxContainerSecurityContext = {
    namespaceOptions: {
      network: ns(pod.spec.hostNetwork, 'POD'),
      pid: ns(pod.spec.hostPID, pod.spec.shareProcessNamespace === true ? 'POD' : 'CONTAINER'),
      ipc: ns(pod.spec.hostIPC, 'POD'),
    },
    privileged: sc.privileged === true,
    readonlyRootfs: sc.readOnlyRootFilesystem === true,
  };
  const user = sc.runAsUser ?? podSc.runAsUser;
  const group = sc.runAsGroup ?? podSc.runAsGroup;
  if ((sc.runAsNonRoot ?? podSc.runAsNonRoot) === true && user === 0) {
    throw new ContainerConfigError(
      `container's runAsUser breaks non-root policy (pod: "${pod.metadata.name}_${pod.metadata.namespace ?? 'default'}(${pod.metadata.uid ?? ''})", container: ${container.name})`,
    );
  }
  if (user !== undefined) out.runAsUser = { value: user };
  if (group !== undefined) out.runAsGroup = { value: group };
  const groups = [
    ...(podSc.supplementalGroups ?? []),
    ...(podSc.fsGroup !== undefined ? [podSc.fsGroup] : []),
  ];
  if (groups.length) out.supplementalGroups = groups;
  if (sc.capabilities?.add?.length || sc.capabilities?.drop?.length) {
    out.capabilities = {
      addCapabilities: sc.capabilities.add ?? [],
      dropCapabilities: sc.capabilities.drop ?? [],
    };
  }
  if (sc.allowPrivilegeEscalation === false) out.noNewPrivs = true;
  const seccomp = sc.seccompProfile ?? podSc.seccompProfile;
  if (seccomp?.type === 'RuntimeDefault' || seccomp?.type === 'Unconfined')
    out.seccomp = { profileType: seccomp.type };
  else if (seccomp?.type === 'Localhost') {
    out.seccomp = { profileType: 'Localhost', localhostRef: seccomp.localhostProfile ?? '' };
  }
  return out;
}

/** The real path of `p` if it stays inside `base` (after resolving symlinks), else undefined. */
function realInside(base: string, p: string): string | undefined {
  const realBase = realpathSync(base);
  const real = realpathSync(p);
  return real === realBase || real.startsWith(`${realBase}/`) ? real : undefined;
}

/** A subPath inside its volume: relative, no `..`, and no symlink leading out (created if missing, as kubelet does). */
function subPathHost(volumeDir: string, sub: string, field: string): string {
  if (posix.isAbsolute(sub))
    throw new ContainerConfigError(`error SubPath \`${sub}\` must not be an absolute path`);
  if (sub.split('/').includes('..')) {
    throw new ContainerConfigError(`unable to provision SubPath \`${sub}\`: must not contain '..'`);
  }
  const wanted = join(volumeDir, sub);
  let existing = wanted;
  while (!existsSync(existing) && existing !== volumeDir) existing = dirname(existing);
  const outside = () =>
    new ContainerConfigError(`subPath \`${sub}\` of ${field} resolves outside the volume`);
  if (!realInside(volumeDir, existing)) throw outside();
  if (!existsSync(wanted)) mkdirSync(wanted, { recursive: true, mode: statSync(volumeDir).mode & 0o7777 });
  const real = realInside(volumeDir, wanted);
  if (!real) throw outside();
  return real;
}

/** CRI mounts for the container's volumeMounts. */
export function makeMounts(
  pod: Pod,
  container: Container,
  volumes: Map<string, string>,
  envs: EnvVar[],
): cri.Mount[] {
  const specVolumes = (pod.spec.volumes ?? []) as Record<string, unknown>[];
  const vars = new Map(envs.map((e) => [e.key, e.value]));
  return ((container.volumeMounts ?? []) as VolumeMount[]).map((m, i) => {
    let hostPath = volumes.get(m.name);
    if (hostPath === undefined) {
      throw new ContainerConfigError(
        `cannot find volume "${m.name}" to mount into container "${container.name}"`,
      );
    }
    // kubelet's ExpandContainerVolumeMounts: every variable subPathExpr names must be set and non-empty.
    const missing = new Set<string>();
    const value = (n: string) => vars.get(n) || (missing.add(n) && '');
    const sub = m.subPathExpr ? expand(m.subPathExpr, value) : m.subPath;
    if (missing.size) throw new ContainerConfigError(`missing value for ${[...missing].sort().join(', ')}`);
    if (sub) hostPath = subPathHost(hostPath, sub, `volumeMounts[${i}]`);
    if (
      m.mountPropagation === 'Bidirectional' &&
      !(container.securityContext as SecurityContext)?.privileged
    ) {
      throw new ContainerConfigError(
        'Bidirectional mount propagation is available only to privileged containers',
      );
    }
    const vol = specVolumes.find((v) => v.name === m.name);
    const apiData = vol !== undefined && READ_ONLY_TYPES.some((t) => vol[t] != null);
    return {
      containerPath: m.mountPath,
      hostPath,
      readonly: m.readOnly === true || apiData,
      // kubelet falls back to private for an unknown mode
      propagation: Object.hasOwn(PROPAGATION, m.mountPropagation ?? '')
        ? PROPAGATION[m.mountPropagation!]!
        : 'PROPAGATION_PRIVATE',
    };
  });
}

/** Container ports as kubelet JSON-encodes them (Go field order, omitempty). */
function portsJson(ports: Record<string, unknown>[]): string {
  return JSON.stringify(
    ports.map((p) => ({
      ...(p.name ? { name: p.name } : {}),
      ...(p.hostPort ? { hostPort: p.hostPort } : {}),
      containerPort: p.containerPort,
      protocol: p.protocol ?? 'TCP',
      ...(p.hostIP ? { hostIP: p.hostIP } : {}),
    })),
  );
}

/** The CRI ContainerConfig for one of the pod's containers, labelled and annotated as kubelet does. */
export function buildContainerConfig(
  pod: Pod,
  container: Container,
  opts: ContainerConfigOptions,
): cri.ContainerConfig {
  const { name = '', namespace = 'default', uid = '' } = pod.metadata;
  const annotations: Record<string, string> = {
    'io.kubernetes.container.hash': opts.specHash,
    [CONTAINER_RESTART_COUNT]: String(opts.restartCount),
    'io.kubernetes.container.terminationMessagePath': String(
      container.terminationMessagePath ?? '/dev/termination-log',
    ),
    'io.kubernetes.container.terminationMessagePolicy': String(container.terminationMessagePolicy ?? 'File'),
  };
  if (pod.metadata.deletionGracePeriodSeconds !== undefined) {
    annotations['io.kubernetes.pod.deletionGracePeriod'] = String(pod.metadata.deletionGracePeriodSeconds);
  }
  if (pod.spec.terminationGracePeriodSeconds != null) {
    annotations['io.kubernetes.pod.terminationGracePeriod'] = String(pod.spec.terminationGracePeriodSeconds);
  }
  const preStop = (container.lifecycle as { preStop?: unknown } | undefined)?.preStop;
  if (preStop) annotations['io.kubernetes.container.preStopHandler'] = JSON.stringify(preStop);
  const ports = (container.ports ?? []) as Record<string, unknown>[];
  if (ports.length) annotations['io.kubernetes.container.ports'] = portsJson(ports);

  const config: cri.ContainerConfig = {
    metadata: { name: container.name, attempt: opts.attempt },
    image: { image: container.image ?? '' },
    envs: opts.envs.map((e) => ({ key: e.key, value: e.value })),
    mounts: makeMounts(pod, container, opts.volumes, opts.envs),
    labels: {
      [POD_NAME]: name,
      [POD_NAMESPACE]: namespace,
      [POD_UID]: uid,
      [CONTAINER_NAME]: container.name,
    },
    annotations,
    logPath: opts.logPath,
    stdin: container.stdin === true,
    stdinOnce: container.stdinOnce === true,
    tty: container.tty === true,
    linux: {
      resources: linuxResources(pod, container, opts.memoryCapacity),
      securityContext: securityContext(pod, container),
    },
  };
  const command = container.command as string[] | undefined;
  const args = container.args as string[] | undefined;
  if (command?.length) config.command = expandCommand(command, opts.envs);
  if (args?.length) config.args = expandCommand(args, opts.envs);
  if (typeof container.workingDir === 'string' && container.workingDir)
    config.workingDir = container.workingDir;
  return config;
}
