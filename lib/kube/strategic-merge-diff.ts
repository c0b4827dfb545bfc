// Creating a two-way strategic merge patch (apimachinery `CreateTwoWayMergePatch` with `$setElementOrder`):
// the smallest patch that turns `original` into `modified` under the same schema.
import {
  childPath,
  clone,
  deepEqual,
  type FieldPatchMeta,
  isObject,
  type Json,
  type JsonObject,
  mergeKeyOf,
  type PatchSchema,
  patchError,
} from './strategic-merge-schema.ts';

/**
 * Returns the patch that `applyStrategicMergePatch(original, patch, schema)` turns into `modified`: changed
 * fields only, `null` for removed keys, `$patch: delete` for removed keyed items, `$deleteFromPrimitiveList`
 * for removed set members and `$setElementOrder` for every merged list that changed. `{}` means no change.
 */
export function createStrategicMergePatch(
  original: unknown,
  modified: unknown,
  schema: PatchSchema = {},
): JsonObject {
  if ((original != null && !isObject(original)) || !isObject(modified))
    throw patchError('invalid JSON document');
  return new Differ(schema).maps((original ?? {}) as JsonObject, modified, '', false);
}

class Differ {
  constructor(private readonly schema: PatchSchema) {}

  private meta(path: string): FieldPatchMeta | undefined {
    return Object.hasOwn(this.schema, path) ? this.schema[path] : undefined;
  }

  maps(original: JsonObject, modified: JsonObject, path: string, retainKeys: boolean): JsonObject {
    const patch: JsonObject = {};
    for (const [key, m] of Object.entries(modified)) {
      if (m === undefined) continue;
      const o = original[key];
      const p = childPath(path, key);
      const meta = this.meta(p);
      if (isObject(o) && isObject(m) && meta?.strategy !== 'replace') {
        const sub = this.maps(o, m, p, meta?.retainKeys === true);
        if (Object.keys(sub).length > 0) patch[key] = sub;
      } else if (Array.isArray(o) && Array.isArray(m) && meta?.strategy === 'merge') {
        this.list(key, o, m, p, meta, patch);
      } else if (o === undefined || !deepEqual(o, m)) {
        patch[key] = clone(m);
      }
    }
    for (const [key, o] of Object.entries(original)) {
      if (o !== undefined && modified[key] === undefined) patch[key] = null;
    }
    // `$retainKeys` names every key the object keeps, so the live object drops keys no one patched.
    if (retainKeys && Object.keys(patch).length > 0) {
      patch.$retainKeys = Object.keys(modified)
        .filter((k) => modified[k] != null)
        .sort();
    }
    return patch;
  }

  // Writes `key`, `$deleteFromPrimitiveList/key` and `$setElementOrder/key` into `patch` as needed.
  private list(
    key: string,
    o: Json[],
    m: Json[],
    path: string,
    meta: FieldPatchMeta,
    patch: JsonObject,
  ): void {
    if (deepEqual(o, m)) return;
    const has = (list: Json[], x: Json): boolean => list.some((y) => deepEqual(x, y));
    if (![...o, ...m].some(isObject)) {
      const added = m.filter((x, i) => !has(o, x) && !has(m.slice(0, i), x));
      const removed = o.filter((x, i) => !has(m, x) && !has(o.slice(0, i), x));
      if (added.length > 0) patch[key] = clone(added);
      if (removed.length > 0) patch[`$deleteFromPrimitiveList/${key}`] = clone(removed);
      if (m.length > 0) patch[`$setElementOrder/${key}`] = clone(m);
      return;
    }
    const mergeKey = meta.mergeKey;
    if (!mergeKey) throw patchError(`cannot merge lists without merge key for ${path}`);
    const keysOf = (list: Json[]): Json[] => list.map((x) => mergeKeyOf(x, mergeKey));
    const oKeys = keysOf(o);
    const mKeys = keysOf(m);
    const items: Json[] = [];
    m.forEach((item, i) => {
      const prev = o[oKeys.findIndex((k) => deepEqual(k, mKeys[i]))];
      if (!isObject(prev)) items.push(clone(item));
      else {
        const sub = this.maps(prev, item as JsonObject, path, meta.retainKeys === true);
        if (Object.keys(sub).length > 0) items.push({ [mergeKey]: clone(mKeys[i]!), ...sub });
      }
    });
    for (const k of oKeys) if (!has(mKeys, k)) items.push({ [mergeKey]: clone(k), $patch: 'delete' });
    const sameOrder = oKeys.length === mKeys.length && oKeys.every((k, i) => deepEqual(k, mKeys[i]));
    if (items.length > 0) patch[key] = items;
    if ((items.length > 0 || !sameOrder) && m.length > 0) {
      patch[`$setElementOrder/${key}`] = mKeys.map((k) => ({ [mergeKey]: clone(k) }));
    }
  }
}
