// Applying a strategic merge patch (apimachinery `strategicpatch.StrategicMergePatch`, with unmatched nulls
// ignored as the apiserver does): the kubelet-style status patch is merged over the stored pod status on read.
import {
  childPath,
  clone,
  deepEqual,
  type FieldPatchMeta,
  goFormat,
  goType,
  isObject,
  type Json,
  type JsonObject,
  mergeKeyOf,
  type PatchSchema,
  patchError,
} from './strategic-merge-schema.ts';

export { createStrategicMergePatch } from './strategic-merge-diff.ts';
export type { FieldPatchMeta, Json, JsonObject, PatchSchema } from './strategic-merge-schema.ts';
export { podSchema } from './strategic-merge-schema.ts';

const PATCH = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ORDER = '$setElementOrder/';
const DELETE_FROM = '$deleteFromPrimitiveList/';

/**
 * Returns `original` with `patch` applied; neither input is modified and the result shares nothing with them.
 * Throws 400 BadRequest Statuses, worded as apimachinery words them, for malformed patches.
 */
export function applyStrategicMergePatch<T>(original: T, patch: unknown, schema: PatchSchema = {}): T {
  if (!isObject(patch) || (original != null && !isObject(original)))
    throw patchError('invalid JSON document');
  return new Merger(schema).map(clone((original ?? {}) as JsonObject), patch, '') as T;
}

const dedupe = (list: Json[]): Json[] => list.filter((x, i) => list.findIndex((y) => deepEqual(x, y)) === i);

class Merger {
  constructor(private readonly schema: PatchSchema) {}

  private meta(path: string): FieldPatchMeta | undefined {
    return Object.hasOwn(this.schema, path) ? this.schema[path] : undefined;
  }

  // `target` is owned (a copy) and updated in place; `patch` is only read.
  map(target: JsonObject, patch: JsonObject, path: string): JsonObject {
    const directive = patch[PATCH];
    if (directive !== undefined) {
      if (directive === 'delete') return {};
      if (directive !== 'replace') {
        throw patchError(`unknown patch type: ${goFormat(directive)} in map: ${goFormat(patch)}`);
      }
      const { [PATCH]: _, ...rest } = patch;
      return this.map({}, rest, path);
    }
    if (patch[RETAIN_KEYS] !== undefined) retainKeys(target, patch);
    // Lists with an order directive first, as upstream does; later keys must not touch them again.
    const ordered = new Set<string>();
    for (const key of Object.keys(patch)) {
      if (!key.startsWith(SET_ORDER)) continue;
      const field = key.slice(SET_ORDER.length);
      this.orderedList(target, patch, field, childPath(path, field));
      ordered.add(field);
    }
    for (const [key, value] of Object.entries(patch)) {
      if (value === undefined || key === RETAIN_KEYS || ordered.has(key)) continue;
      if (key.startsWith(SET_ORDER) || key.startsWith(DELETE_FROM)) continue;
      if (value === null) {
        delete target[key];
        continue;
      }
      const current = target[key];
      const p = childPath(path, key);
      if (isObject(current) && isObject(value)) {
        target[key] =
          this.meta(p)?.strategy === 'replace' ? this.fresh(value, p) : this.map(current, value, p);
      } else if (Array.isArray(current) && Array.isArray(value)) {
        target[key] = this.list(current, value, p);
      } else {
        target[key] = this.fresh(value, p);
      }
    }
    // Deletions from primitive lists last, so that they win over an addition of the same value.
    for (const [key, value] of Object.entries(patch)) {
      if (!key.startsWith(DELETE_FROM)) continue;
      if (!Array.isArray(value)) throw patchError('invalid patch format of primitive list');
      const field = key.slice(DELETE_FROM.length);
      const current = target[field];
      if (Array.isArray(current)) target[field] = current.filter((x) => !value.some((d) => deepEqual(d, x)));
    }
    return target;
  }

  // A patch value with nothing to merge into: directives are applied and nulls dropped.
  private fresh(value: Json, path: string): Json {
    if (isObject(value)) return this.map({}, value, path);
    if (Array.isArray(value)) return this.list([], value, path);
    return value;
  }

  list(target: Json[], patch: Json[], path: string): Json[] {
    const meta = this.meta(path);
    if (meta?.strategy !== 'merge') return clone(patch);
    if (![...target, ...patch].some(isObject)) return dedupe([...target, ...patch]);
    const mergeKey = meta.mergeKey;
    if (!mergeKey) throw patchError(`cannot merge lists without merge key for ${path}`);
    let out = target;
    let replace = false;
    const items: JsonObject[] = [];
    for (const item of patch) {
      if (!isObject(item))
        throw patchError(`expected a map[string]interface {}, but received a ${goType(item)}`);
      const directive = item[PATCH];
      if (directive === undefined) items.push(item);
      else if (directive === 'replace') replace = true;
      else if (directive === 'delete') {
        const key = mergeKeyOf(item, mergeKey);
        out = out.filter((x) => !(isObject(x) && deepEqual(x[mergeKey], key)));
      } else if (directive === 'merge')
        throw patchError('merging lists cannot yet be specified in the patch');
      else throw patchError(`unknown patch type: ${goFormat(directive)} in map: ${goFormat(item)}`);
    }
    if (replace) out = [];
    for (const item of items) {
      const key = mergeKeyOf(item, mergeKey);
      const i = out.findIndex((x) => isObject(x) && deepEqual(x[mergeKey], key));
      const existing = out[i];
      if (isObject(existing)) out[i] = this.map(existing, item, path);
      else out.push(this.map({}, item, path));
    }
    return out;
  }

  // `$setElementOrder/<field>`: merge the list, then order what the directive names as it says, keeping
  // items it does not name where they stood relative to the live list.
  private orderedList(target: JsonObject, patch: JsonObject, field: string, path: string): void {
    const order = patch[SET_ORDER + field];
    const value = patch[field];
    if (!Array.isArray(order) || (value != null && !Array.isArray(value))) {
      throw patchError('invalid patch format of setElementOrder list');
    }
    const mergeKey = this.meta(path)?.mergeKey;
    if (mergeKey) for (const o of order) mergeKeyOf(o, mergeKey);
    const keyOf = (x: Json): Json | undefined => (mergeKey ? (isObject(x) ? x[mergeKey] : undefined) : x);
    const indexIn = (list: Json[], x: Json): number => list.findIndex((y) => deepEqual(keyOf(y), keyOf(x)));
    if (Array.isArray(value)) checkOrder(value, order, keyOf);

    const current = target[field];
    const live = Array.isArray(current) ? [...current] : []; // list() may extend `current` in place
    let merged: Json[];
    if (Array.isArray(value)) merged = this.list(Array.isArray(current) ? current : [], value, path);
    else if (Array.isArray(current)) merged = current;
    else return;

    const named = merged.filter((x) => indexIn(order, x) >= 0);
    named.sort((a, b) => indexIn(order, a) - indexIn(order, b));
    const unnamed = merged.filter((x) => indexIn(order, x) < 0);
    const out: Json[] = [];
    let i = 0;
    let j = 0;
    while (i < unnamed.length && j < named.length) {
      const li = indexIn(live, unnamed[i]!);
      const ri = indexIn(live, named[j]!);
      out.push(li >= 0 && ri >= 0 && li < ri ? unnamed[i++]! : named[j++]!);
    }
    target[field] = [...out, ...unnamed.slice(i), ...named.slice(j)];
  }
}

// Every item the patch list sets must appear in the order list, in the same relative order.
function checkOrder(value: Json[], order: Json[], keyOf: (x: Json) => Json | undefined): void {
  const items = value.filter((x) => !(isObject(x) && x[PATCH] !== undefined));
  let i = 0;
  for (const o of order) if (i < items.length && deepEqual(keyOf(items[i]!), keyOf(o))) i++;
  if (i < items.length) {
    throw patchError(
      `The order in patch list:\n${goFormat(value)}\n doesn't match $setElementOrder list:\n${goFormat(order)}\n`,
    );
  }
}

// `$retainKeys`: drop live keys the list does not name; the patch itself may only set named keys.
function retainKeys(target: JsonObject, patch: JsonObject): void {
  const keep = patch[RETAIN_KEYS];
  if (!Array.isArray(keep)) throw patchError('invalid patch format of retainKeys');
  for (const [key, value] of Object.entries(patch)) {
    if (value == null || key === RETAIN_KEYS || key.startsWith(SET_ORDER) || key.startsWith(DELETE_FROM))
      continue;
    if (!keep.includes(key)) throw patchError('invalid patch format of retainKeys');
  }
  for (const key of Object.keys(target)) if (!keep.includes(key)) delete target[key];
}
