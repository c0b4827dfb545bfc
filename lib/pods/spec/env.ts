import { statfsSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { parseQuantity, type Quantity, quantityMilliValue, quantityValue } from '#lib/kube/quantity.ts';
import type { Container, KubeObject, Pod } from '#lib/kube/types.ts';

/** A container cannot be configured (missing ConfigMap, Secret or key, bad field reference): kubelet's `CreateContainerConfigError`. */
export class ContainerConfigError extends Error {
  override name = 'ContainerConfigError';
  readonly reason = 'CreateContainerConfigError';
}

export type Lookup = (
  kind: 'ConfigMap' | 'Secret' | 'ServiceAccountToken',
  ns: string,
  name: string,
) => KubeObject | undefined;
export type EnvVar = { key: string; value: string };

/** What downward-API references read besides the pod itself. */
export interface FieldContext {
  podIP: string;
  hostIP: string;
  nodeName: string;
  podIPs?: string[];
  hostIPs?: string[];
  /** Node allocatable used for unset limits; defaults to this machine's CPUs, memory and root disk. */
  allocatable?: Partial<Record<'cpu' | 'memory' | 'ephemeral-storage', string | number>>;
}
export interface EnvContext extends FieldContext {
  lookup: Lookup;
}

type KeyRef = { name?: string; key: string; optional?: boolean };
type ObjectRef = { name?: string; optional?: boolean };
export type ResourceFieldRef = { containerName?: string; resource: string; divisor?: string | number };
type FieldRef = { fieldPath: string; apiVersion?: string };
type EnvSpec = {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: FieldRef;
    resourceFieldRef?: ResourceFieldRef;
    configMapKeyRef?: KeyRef;
    secretKeyRef?: KeyRef;
  };
};
type EnvFromSpec = { prefix?: string; configMapRef?: ObjectRef; secretRef?: ObjectRef };

/** Expands `$(VAR)` like kubelet (third_party/forked/golang/expansion): `$$` escapes, unknown refs stay as written. */
export function expand(input: string, vars: (name: string) => string | undefined): string {
  // `$` then: `$` (escape), `(name)` (a reference), or any one character (copied as is, as Go does).
  return input.replace(/\$(\$|\(([^)]*)\)|[\s\S])?/g, (m: string, _: string, name: string | undefined) =>
    m === '$$' ? '$' : name !== undefined ? (vars(name) ?? m) : m,
  );
}

/** `$(VAR)` expansion of a container's command or args against its resolved environment (later entries win). */
export function expandCommand(list: readonly string[] | undefined, envs: readonly EnvVar[]): string[] {
  const vars = new Map(envs.map((e) => [e.key, e.value]));
  return (list ?? []).map((s) => expand(s, (n) => vars.get(n)));
}

/** A ConfigMap's `data` and base64 `binaryData` as bytes. */
export function configMapEntries(cm: KubeObject): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const [k, v] of Object.entries((cm.data ?? {}) as Record<string, string>))
    out.set(k, Buffer.from(String(v)));
  for (const [k, v] of Object.entries((cm.binaryData ?? {}) as Record<string, string>)) {
    out.set(k, Buffer.from(String(v), 'base64'));
  }
  return out;
}

/** A Secret's base64 `data`, with `stringData` merged over it as the API server does on write. */
export function secretEntries(secret: KubeObject): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const [k, v] of Object.entries((secret.data ?? {}) as Record<string, string>)) {
    out.set(k, Buffer.from(String(v), 'base64'));
  }
  for (const [k, v] of Object.entries((secret.stringData ?? {}) as Record<string, string>))
    out.set(k, Buffer.from(String(v)));
  return out;
}

/** kubelet's (and the API's) words for a missing object: `configmap "x" not found`. */
export const notFoundMessage = (kind: 'ConfigMap' | 'Secret', name: string): string =>
  `${kind.toLowerCase()} "${name}" not found`;

// Go's %q, as kubelet's fieldpath.FormatMap writes label and annotation values.
function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if ('\x07\b\f\n\r\t\v'.includes(ch)) out += `\\${'abfnrtv'['\x07\b\f\n\r\t\v'.indexOf(ch)]}`;
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if ((c >= 0x80 && c <= 0xa0) || c === 0xad || c === 0x2028 || c === 0x2029 || c === 0xfeff) {
      out += `\\u${c.toString(16).padStart(4, '0')}`;
    } else out += ch;
  }
  return `${out}"`;
}

/** `k="v"` lines sorted by key, as the downward API renders whole label and annotation maps. */
export const formatMap = (m: Record<string, string> | undefined): string =>
  Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${goQuote(m![k]!)}`)
    .join('\n');

/** The value of a downward-API `fieldRef` (kubelet's podFieldSelectorRuntimeValue + ExtractFieldPathAsString). */
export function podFieldValue(pod: Pod, ref: FieldRef, ctx: FieldContext): string {
  if (ref.apiVersion && ref.apiVersion !== 'v1')
    throw new ContainerConfigError(`unsupported pod version: ${ref.apiVersion}`);
  const path = ref.fieldPath === 'spec.host' ? 'spec.nodeName' : ref.fieldPath;
  const podIPs = ctx.podIPs?.length ? ctx.podIPs : ctx.podIP ? [ctx.podIP] : [];
  const hostIPs = ctx.hostIPs?.length ? ctx.hostIPs : ctx.hostIP ? [ctx.hostIP] : [];
  const sub = /^(metadata\.(?:labels|annotations))\['(.*)'\]$/.exec(path);
  if (sub) {
    const map = (sub[1] === 'metadata.labels' ? pod.metadata.labels : pod.metadata.annotations) ?? {};
    if (!sub[2]) throw new ContainerConfigError(`invalid key subscript in ${path}: must be non-empty`);
    return map[sub[2]] ?? '';
  }
  switch (path) {
    case 'metadata.name':
      return pod.metadata.name ?? '';
    case 'metadata.namespace':
      return pod.metadata.namespace ?? 'default';
    case 'metadata.uid':
      return pod.metadata.uid ?? '';
    case 'metadata.labels':
      return formatMap(pod.metadata.labels);
    case 'metadata.annotations':
      return formatMap(pod.metadata.annotations);
    case 'spec.nodeName':
      return pod.spec.nodeName || ctx.nodeName;
    case 'spec.serviceAccountName':
      return String(pod.spec.serviceAccountName ?? '');
    case 'status.podIP':
      return podIPs[0] ?? '';
    case 'status.podIPs':
      return podIPs.join(',');
    case 'status.hostIP':
      return hostIPs[0] ?? '';
    case 'status.hostIPs':
      return hostIPs.join(',');
  }
  throw new ContainerConfigError(`unsupported fieldPath: ${path}`);
}

function nodeAllocatable(ctx: FieldContext, name: string): string | number {
  const given = ctx.allocatable?.[name as 'cpu'];
  if (given !== undefined) return given;
  if (name === 'cpu') return cpus().length || 1;
  if (name === 'memory') return totalmem();
  const fs = statfsSync('/');
  return fs.blocks * fs.bsize;
}

function quantity(v: string | number, what: string): Quantity {
  try {
    return parseQuantity(v);
  } catch (e) {
    throw new ContainerConfigError(`${what}: ${(e as Error).message}`);
  }
}

/** A `resourceFieldRef` value: ceil(amount / divisor); unset limits default to node allocatable, unset requests to limits. */
export function resourceFieldValue(container: Container, ref: ResourceFieldRef, ctx: FieldContext): string {
  type Res = { limits?: Record<string, string | number>; requests?: Record<string, string | number> };
  const res = (container.resources ?? {}) as Res;
  const m = /^(limits|requests)\.(cpu|memory|ephemeral-storage)$/.exec(ref.resource);
  if (!m) throw new ContainerConfigError(`unsupported container resource : ${ref.resource}`);
  const [, kind, name = ''] = m;
  const raw =
    kind === 'limits'
      ? (res.limits?.[name] ?? nodeAllocatable(ctx, name))
      : (res.requests?.[name] ?? res.limits?.[name] ?? 0);
  const amount = quantity(raw, `${ref.resource}`);
  let divisor = quantity(ref.divisor ?? '1', `${ref.resource} divisor`);
  if (divisor.num === 0n) divisor = { num: 1n, den: 1n };
  const ratio =
    name === 'cpu'
      ? quantityMilliValue(amount) / quantityMilliValue(divisor)
      : quantityValue(amount) / quantityValue(divisor);
  return String(Math.ceil(ratio));
}

/** The container's environment with kubelet's semantics: envFrom first, then env in order, `$(VAR)` against what came before. */
export function resolveEnv(
  pod: Pod,
  container: Container,
  ctx: EnvContext,
): { envs: EnvVar[]; warnings: string[] } {
  const ns = pod.metadata.namespace ?? 'default';
  const cache = new Map<string, KubeObject | undefined>();
  const fetch = (
    kind: 'ConfigMap' | 'Secret',
    name: string,
    optional: boolean,
  ): Map<string, Buffer> | undefined => {
    const key = `${kind}/${name}`;
    if (!cache.has(key)) cache.set(key, ctx.lookup(kind, ns, name));
    const obj = cache.get(key);
    if (!obj) {
      if (optional) return undefined;
      throw new ContainerConfigError(notFoundMessage(kind, name));
    }
    // kubelet reads only `data` of a ConfigMap for the environment, never binaryData.
    return kind === 'Secret' ? secretEntries(obj) : configMapEntries({ ...obj, binaryData: undefined });
  };
  const vars = new Map<string, string>();
  const warnings: string[] = [];

  for (const from of (container.envFrom ?? []) as EnvFromSpec[]) {
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref) continue;
    const kind = from.configMapRef ? 'ConfigMap' : 'Secret';
    const name = ref.name ?? '';
    const entries = fetch(kind, name, ref.optional === true);
    if (!entries) continue;
    const invalid: string[] = [];
    for (const [k, v] of entries) {
      const key = `${from.prefix ?? ''}${k}`;
      if (/^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(key)) vars.set(key, v.toString());
      else invalid.push(key);
    }
    if (invalid.length) {
      warnings.push(
        `Keys [${invalid.sort().join(', ')}] from the EnvFrom ${kind === 'ConfigMap' ? 'configMap' : 'secret'} ${ns}/${name} were skipped since they are considered invalid environment variable names.`,
      );
    }
  }

  for (const env of (container.env ?? []) as EnvSpec[]) {
    let value = env.value ?? '';
    const from = env.valueFrom;
    if (value !== '') value = expand(value, (n) => vars.get(n));
    else if (from?.fieldRef) value = podFieldValue(pod, from.fieldRef, ctx);
    else if (from?.resourceFieldRef) value = resourceFieldValue(container, from.resourceFieldRef, ctx);
    else if (from?.configMapKeyRef || from?.secretKeyRef) {
      const ref = (from.configMapKeyRef ?? from.secretKeyRef)!;
      const kind = from.configMapKeyRef ? 'ConfigMap' : 'Secret';
      const optional = ref.optional === true;
      const entries = fetch(kind, ref.name ?? '', optional);
      if (!entries) continue;
      const bytes = entries.get(ref.key);
      if (!bytes) {
        if (optional) continue;
        throw new ContainerConfigError(`couldn't find key ${ref.key} in ${kind} ${ns}/${ref.name ?? ''}`);
      }
      value = bytes.toString();
    }
    vars.set(env.name, value);
  }
  return { envs: [...vars].map(([key, value]) => ({ key, value })), warnings };
}
