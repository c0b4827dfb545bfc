// The container sections of `kubectl describe pod` (describeContainers and its helpers).
import { parseQuantity, quantityMilliValue, quantityValue } from '#lib/kube/quantity.ts';
import { formatQuantity } from '#lib/kube/quantity-format.ts';
import type { ContainerState, ContainerStatus, Pod } from '#lib/kube/types.ts';
import { LEVEL_0, LEVEL_1, LEVEL_2, LEVEL_3, type PrefixWriter, rfc1123z } from './describe-writer.ts';

type Amount = string | number;
export interface Resources {
  limits?: Record<string, Amount>;
  requests?: Record<string, Amount>;
}

interface Probe {
  exec?: { command?: string[] };
  httpGet?: { path?: string; port: number | string; host?: string; scheme?: string };
  tcpSocket?: { port: number | string; host?: string };
  grpc?: { port: number; service?: string };
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
}

interface KeyRef {
  name?: string;
  key: string;
  optional?: boolean;
}

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { apiVersion?: string; fieldPath: string };
    resourceFieldRef?: { resource: string; divisor?: Amount };
    configMapKeyRef?: KeyRef;
    secretKeyRef?: KeyRef;
  };
}

/** The fields of a v1 Container that describe reads. */
export interface SpecContainer {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  ports?: { containerPort: number; hostPort?: number; protocol?: string }[];
  env?: EnvVar[];
  envFrom?: {
    prefix?: string;
    configMapRef?: { name?: string; optional?: boolean };
    secretRef?: { name?: string; optional?: boolean };
  }[];
  resources?: Resources;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean; subPath?: string }[];
  volumeDevices?: { name: string; devicePath: string }[];
  securityContext?: { seccompProfile?: { type: string; localhostProfile?: string } };
}

const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** `Limits:` then `Requests:`, each resource sorted by name, quantities in canonical form. */
export function describeResources(w: PrefixWriter, r: Resources | undefined, level: number): void {
  if (!r) return;
  for (const [title, list] of [
    ['Limits', r.limits],
    ['Requests', r.requests],
  ] as const) {
    const names = Object.keys(list ?? {}).sort(byKey);
    if (names.length) w.write(level, `${title}:\n`);
    for (const n of names) w.write(level + 1, `${n}:\t${formatQuantity(list![n]!)}\n`);
  }
}

// Go's url.URL.String() path escaping (encodePath): unreserved characters and $&+,/:;=@ stay.
const escapePath = (p: string) =>
  [...Buffer.from(p)]
    .map((b) => {
      const ch = String.fromCharCode(b);
      return /[A-Za-z0-9\-_.~$&+,/:;=@]/.test(ch) ? ch : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');

/** DescribeProbe: the action, then delay, timeout, period and thresholds as stored. */
export function describeProbe(p: Probe): string {
  const attrs =
    `delay=${p.initialDelaySeconds ?? 0}s timeout=${p.timeoutSeconds ?? 0}s period=${p.periodSeconds ?? 0}s ` +
    `#success=${p.successThreshold ?? 0} #failure=${p.failureThreshold ?? 0}`;
  if (p.exec) return `exec [${(p.exec.command ?? []).join(' ')}] ${attrs}`;
  if (p.httpGet) {
    const g = p.httpGet;
    const scheme = (g.scheme ?? '').toLowerCase();
    const port = String(g.port ?? '');
    const h = g.host ?? '';
    const host = port ? `${h.includes(':') ? `[${h}]` : h}:${port}` : h;
    let path = escapePath(g.path ?? '');
    if (path && !path.startsWith('/') && host) path = `/${path}`;
    const url = `${scheme ? `${scheme}:` : ''}${host || path ? '//' : ''}${host}${path}`;
    return `http-get ${url} ${attrs}`;
  }
  if (p.tcpSocket) return `tcp-socket ${p.tcpSocket.host ?? ''}:${p.tcpSocket.port} ${attrs}`;
  if (p.grpc) return `grpc <pod>:${p.grpc.port} ${p.grpc.service ?? ''} ${attrs}`;
  return `unknown ${attrs}`;
}

function describeState(w: PrefixWriter, title: string, s: ContainerState | undefined): void {
  if (s?.running) {
    w.write(LEVEL_2, `${title}:\tRunning\n`);
    w.write(LEVEL_3, `Started:\t${rfc1123z(s.running.startedAt)}\n`);
  } else if (s?.waiting) {
    w.write(LEVEL_2, `${title}:\tWaiting\n`);
    if (s.waiting.reason) w.write(LEVEL_3, `Reason:\t${s.waiting.reason}\n`);
  } else if (s?.terminated) {
    const t = s.terminated;
    w.write(LEVEL_2, `${title}:\tTerminated\n`);
    if (t.reason) w.write(LEVEL_3, `Reason:\t${t.reason}\n`);
    if (t.message) w.write(LEVEL_3, `Message:\t${t.message}\n`);
    w.write(LEVEL_3, `Exit Code:\t${t.exitCode ?? 0}\n`);
    if ((t.signal ?? 0) > 0) w.write(LEVEL_3, `Signal:\t${t.signal}\n`);
    w.write(LEVEL_3, `Started:\t${rfc1123z(t.startedAt)}\n`);
    w.write(LEVEL_3, `Finished:\t${rfc1123z(t.finishedAt)}\n`);
  } else {
    w.write(LEVEL_2, `${title}:\tWaiting\n`);
  }
}

// kubectl's scheme registers no field-label conversion for v1 Pods, so only metadata.name and
// metadata.namespace pass it and get a value; every other fieldRef shows an empty one.
function fieldRefValue(pod: Pod, apiVersion: string, fieldPath: string): string {
  if (apiVersion.split('/').length > 2) return '';
  if (fieldPath === 'metadata.name') return pod.metadata.name ?? '';
  if (fieldPath === 'metadata.namespace') return pod.metadata.namespace ?? '';
  return '';
}

// resourcehelper.ExtractContainerResourceValue: CPU in whole divisors (millis rounded up), the rest in bytes.
function resourceValue(c: SpecContainer, resource: string, divisor: Amount | undefined): string {
  try {
    const div = parseQuantity(divisor === undefined || Number(divisor) === 0 ? '1' : divisor);
    const [list, name = ''] = resource.split('.', 2) as [string, string?];
    const values =
      list === 'limits'
        ? (c.resources?.limits ?? {})
        : list === 'requests'
          ? (c.resources?.requests ?? {})
          : undefined;
    if (
      !values ||
      !(name === 'cpu' || name === 'memory' || name === 'ephemeral-storage' || name.startsWith('hugepages-'))
    )
      return '';
    const raw = values[name];
    const q = parseQuantity(raw === undefined ? '0' : raw);
    if (name === 'cpu') return String(Math.ceil(quantityMilliValue(q) / quantityMilliValue(div)));
    return String(Math.ceil(quantityValue(q) / quantityValue(div)));
  } catch {
    return '';
  }
}

function describeEnv(w: PrefixWriter, c: SpecContainer, pod: Pod): void {
  if (c.envFrom?.length) {
    w.write(LEVEL_2, 'Environment Variables from:\n');
    for (const e of c.envFrom) {
      const ref = e.configMapRef ?? e.secretRef;
      const from = e.configMapRef ? 'ConfigMap' : e.secretRef ? 'Secret' : '';
      const optional = ref?.optional === true;
      const source = e.prefix ? `${from} with prefix '${e.prefix}'` : from;
      w.write(LEVEL_3, `${ref?.name ?? ''}\t${source}\tOptional: ${optional}\n`);
    }
  }
  w.write(LEVEL_2, `Environment:${c.env?.length ? '' : '\t<none>'}\n`);
  for (const e of c.env ?? []) {
    const from = e.valueFrom;
    if (!from) {
      (e.value ?? '').split('\n').forEach((line, i) => {
        w.write(LEVEL_3, i === 0 ? `${e.name}:\t${line}\n` : `\t${line}\n`);
      });
    } else if (from.fieldRef) {
      const { apiVersion = '', fieldPath } = from.fieldRef;
      const value = fieldRefValue(pod, apiVersion, fieldPath);
      w.write(LEVEL_3, `${e.name}:\t${value} (${apiVersion}:${fieldPath})\n`);
    } else if (from.resourceFieldRef) {
      const { resource, divisor } = from.resourceFieldRef;
      let value = resourceValue(c, resource, divisor);
      if (value === '0' && (resource === 'limits.cpu' || resource === 'limits.memory'))
        value = 'node allocatable';
      w.write(LEVEL_3, `${e.name}:\t${value} (${resource})\n`);
    } else if (from.secretKeyRef) {
      const r = from.secretKeyRef;
      w.write(
        LEVEL_3,
        `${e.name}:\t<set to the key '${r.key}' in secret '${r.name ?? ''}'>\tOptional: ${r.optional === true}\n`,
      );
    } else if (from.configMapKeyRef) {
      const r = from.configMapKeyRef;
      w.write(
        LEVEL_3,
        `${e.name}:\t<set to the key '${r.key}' of config map '${r.name ?? ''}'>\tOptional: ${r.optional === true}\n`,
      );
    }
  }
}

function describeMounts(w: PrefixWriter, c: SpecContainer): void {
  const none = c.volumeMounts?.length ? '' : '\t<none>';
  w.write(LEVEL_2, `Mounts:${none}\n`);
  for (const m of [...(c.volumeMounts ?? [])].sort((a, b) => byKey(a.mountPath, b.mountPath))) {
    const flags = [m.readOnly ? 'ro' : 'rw'];
    if (m.subPath) flags.push(`path=${JSON.stringify(m.subPath)}`);
    w.write(LEVEL_3, `${m.mountPath} from ${m.name} (${flags.join(',')})\n`);
  }
  if (c.volumeDevices?.length) {
    // kubectl reuses the Mounts suffix here.
    w.write(LEVEL_2, `Devices:${none}\n`);
    for (const d of [...c.volumeDevices].sort((a, b) => byKey(a.devicePath, b.devicePath)))
      w.write(LEVEL_3, `${d.devicePath} from ${d.name}\n`);
  }
}

const ports = (c: SpecContainer, pick: (p: NonNullable<SpecContainer['ports']>[number]) => number) =>
  (c.ports ?? []).map((p) => `${pick(p)}/${p.protocol ?? ''}`).join(', ');

/** One `Containers:`-style section: every container with its status, resources, probes, env and mounts. */
export function describeContainers(
  w: PrefixWriter,
  label: string,
  containers: readonly SpecContainer[],
  statuses: readonly ContainerStatus[] | undefined,
  pod: Pod,
): void {
  w.write(LEVEL_0, `${label}:${containers.length ? '' : ' <none>'}\n`);
  for (const c of containers) {
    const status = statuses?.find((s) => s.name === c.name);
    w.write(LEVEL_1, `${c.name}:\n`);
    if (status) w.write(LEVEL_2, `Container ID:\t${status.containerID ?? ''}\n`);
    w.write(LEVEL_2, `Image:\t${c.image ?? ''}\n`);
    if (status) w.write(LEVEL_2, `Image ID:\t${status.imageID ?? ''}\n`);
    const port = ports(c, (p) => p.containerPort);
    w.write(LEVEL_2, port.includes(',') ? `Ports:\t${port}\n` : `Port:\t${port || '<none>'}\n`);
    const host = ports(c, (p) => p.hostPort ?? 0);
    w.write(LEVEL_2, host.includes(',') ? `Host Ports:\t${host}\n` : `Host Port:\t${host || '<none>'}\n`);
    const seccomp = c.securityContext?.seccompProfile;
    if (seccomp) {
      w.write(LEVEL_2, `SeccompProfile:\t${seccomp.type}\n`);
      if (seccomp.type === 'Localhost')
        w.write(LEVEL_3, `LocalhostProfile:\t${seccomp.localhostProfile ?? ''}\n`);
    }
    if (c.command?.length) {
      w.write(LEVEL_2, 'Command:\n');
      for (const part of c.command) for (const line of part.split('\n')) w.write(LEVEL_3, `${line}\n`);
    }
    if (c.args?.length) {
      w.write(LEVEL_2, 'Args:\n');
      for (const part of c.args) for (const line of part.split('\n')) w.write(LEVEL_3, `${line}\n`);
    }
    if (status) {
      describeState(w, 'State', status.state);
      if (status.lastState?.terminated) describeState(w, 'Last State', status.lastState);
      w.write(LEVEL_2, `Ready:\t${status.ready ? 'True' : 'False'}\n`);
      w.write(LEVEL_2, `Restart Count:\t${status.restartCount ?? 0}\n`);
    }
    describeResources(w, c.resources, LEVEL_2);
    if (c.livenessProbe) w.write(LEVEL_2, `Liveness:\t${describeProbe(c.livenessProbe)}\n`);
    if (c.readinessProbe) w.write(LEVEL_2, `Readiness:\t${describeProbe(c.readinessProbe)}\n`);
    if (c.startupProbe) w.write(LEVEL_2, `Startup:\t${describeProbe(c.startupProbe)}\n`);
    describeEnv(w, c, pod);
    describeMounts(w, c);
  }
}
