// Patch metadata (the Go struct tags `patchStrategy`/`patchMergeKey`) and the JSON helpers shared by applying
// and creating strategic merge patches.
import { badRequest, type StatusError } from './status.ts';

/**
 * How one field is patched. `merge` on a list merges it item by item by `mergeKey` (lists of objects) or as a
 * set (lists of scalars, no `mergeKey`); `replace` on an object replaces it wholesale. `retainKeys` makes
 * created patches carry `$retainKeys` for the object (or, on a list, for each item).
 */
export interface FieldPatchMeta {
  readonly strategy: 'merge' | 'replace';
  readonly mergeKey?: string;
  readonly retainKeys?: boolean;
}

/**
 * Patch metadata by field path: names joined by dots, list items adding nothing (`spec.containers.env`).
 * Fields not listed merge recursively when they are objects and are replaced when they are lists.
 */
export type PatchSchema = Readonly<Record<string, FieldPatchMeta>>;

const byKey = (mergeKey: string, retainKeys = false): FieldPatchMeta =>
  retainKeys ? { strategy: 'merge', mergeKey, retainKeys } : { strategy: 'merge', mergeKey };

const containerLists = ['containers', 'initContainers', 'ephemeralContainers'].flatMap((c) => [
  [`spec.${c}`, byKey('name')],
  [`spec.${c}.env`, byKey('name')],
  [`spec.${c}.ports`, byKey('containerPort')],
  [`spec.${c}.volumeMounts`, byKey('mountPath')],
  [`spec.${c}.volumeDevices`, byKey('devicePath')],
]);

/** Pod patch metadata as core/v1 tags it, except that container statuses merge by name. */
export const podSchema: PatchSchema = {
  'metadata.finalizers': { strategy: 'merge' },
  'metadata.ownerReferences': byKey('uid'),
  ...Object.fromEntries(containerLists),
  'spec.volumes': byKey('name', true),
  'spec.imagePullSecrets': byKey('name'),
  'spec.hostAliases': byKey('ip'),
  'spec.topologySpreadConstraints': byKey('topologyKey'),
  'spec.schedulingGates': byKey('name'),
  'spec.resourceClaims': byKey('name', true),
  'status.conditions': byKey('type'),
  // Upstream gives these no patch strategy (a patch replaces them whole); merging by name lets a patch carry
  // only the containers that changed, but then a full status must be sent as a diff (with nulls), not as is.
  'status.containerStatuses': byKey('name'),
  'status.initContainerStatuses': byKey('name'),
  'status.ephemeralContainerStatuses': byKey('name'),
  'status.podIPs': byKey('ip'),
  'status.hostIPs': byKey('ip'),
  'status.resourceClaimStatuses': byKey('name', true),
};

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export const isObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export const childPath = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/** Deep copy of JSON data; `undefined` members are dropped, as JSON encoding would drop them. */
export function clone<T>(v: T): T {
  if (Array.isArray(v)) return v.map(clone) as T;
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = clone(x);
  return out as T;
}

/** JSON equality; an `undefined` member equals an absent one. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]))
    );
  }
  if (!isObject(a) || !isObject(b)) return false;
  const ka = Object.keys(a).filter((k) => a[k] !== undefined);
  const kb = Object.keys(b).filter((k) => b[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
}

/** Go's `%v` rendering of decoded JSON, which upstream's error messages embed. */
export function goFormat(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).sort();
    return `map[${keys.map((k) => `${k}:${goFormat(v[k])}`).join(' ')}]`;
  }
  return String(v);
}

/** Go's name for the type a JSON value decodes to, as upstream's type errors print it. */
export function goType(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return '[]interface {}';
  if (isObject(v)) return 'map[string]interface {}';
  return typeof v === 'number' ? 'float64' : typeof v === 'boolean' ? 'bool' : 'string';
}

/** A malformed patch: 400 BadRequest with apimachinery's message. */
export const patchError = (message: string): StatusError => badRequest(message);

/** The merge key's value, or a 400 naming the item that lacks it. */
export function mergeKeyOf(item: unknown, mergeKey: string): Json {
  if (!isObject(item)) throw patchError(`expected a map[string]interface {}, but received a ${goType(item)}`);
  const v = item[mergeKey];
  if (v === undefined)
    throw patchError(`map: ${goFormat(item)} does not contain declared merge key: ${mergeKey}`);
  return v;
}
