// managedFields (server-side apply's field ownership) as far as `kubectl apply --server-side` needs:
// each manager owns a set of field paths (FieldsV1); an update hands the fields it changed to its
// manager; an apply owns exactly the fields of its configuration, removes the ones it stopped
// applying (unless another manager owns them), and conflicts with other owners of a field it changes.
import { isDeepStrictEqual } from 'node:util';
import { type StatusCause, StatusError } from './status.ts';
import { applyStrategicMergePatch, type PatchSchema } from './strategic-merge.ts';
import type { KubeObject } from './types.ts';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: FieldsV1;
  subresource?: string;
}
export type FieldsV1 = { [key: string]: FieldsV1 };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const SERVER_METADATA = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'generation',
  'managedFields',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'selfLink',
]);
const SEP = '\u0000';
/** Maps get a `.` entry of their own, as upstream's FieldsV1 has for labels and annotations. */
const MAPS = new Set(['metadata.labels', 'metadata.annotations']);

/** Leaf paths of an object (segments joined by NUL) with their values, in FieldsV1's segment names. */
export function leaves(obj: unknown, schema: PatchSchema): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const walk = (v: unknown, segs: string[], dotted: string) => {
    if (isObj(v)) {
      const keys = Object.keys(v).filter((k) => {
        if (!segs.length) return k !== 'apiVersion' && k !== 'kind' && k !== 'status';
        if (segs.length === 1 && segs[0] === 'f:metadata') return !SERVER_METADATA.has(k);
        return true;
      });
      if (!keys.length) {
        if (segs.length && !Object.keys(v).length) out.set(segs.join(SEP), {});
        return;
      }
      if (MAPS.has(dotted)) out.set([...segs, '.'].join(SEP), null);
      for (const k of keys) walk(v[k], [...segs, `f:${k}`], dotted ? `${dotted}.${k}` : k);
      return;
    }
    const key = schema[dotted]?.mergeKey;
    if (Array.isArray(v) && key && v.every((i) => isObj(i) && i[key] !== undefined)) {
      for (const item of v as Obj[]) {
        const seg = `k:${JSON.stringify({ [key]: item[key] })}`;
        out.set([...segs, seg, '.'].join(SEP), null);
        for (const [k, iv] of Object.entries(item)) walk(iv, [...segs, seg, `f:${k}`], `${dotted}.${k}`);
      }
      return;
    }
    out.set(segs.join(SEP), v);
  };
  walk(obj, [], '');
  return out;
}

/** The FieldsV1 tree of a set of paths. */
export function toFieldsV1(paths: Iterable<string>): FieldsV1 {
  const root: FieldsV1 = {};
  for (const p of paths) {
    let node = root;
    for (const seg of p.split(SEP)) node = node[seg] ??= {};
  }
  return root;
}

/** The paths a FieldsV1 tree names (its leaves; `.` entries included). */
export function fromFieldsV1(tree: FieldsV1 | undefined): Set<string> {
  const out = new Set<string>();
  const walk = (node: FieldsV1, segs: string[]) => {
    const keys = Object.keys(node);
    if (!keys.length && segs.length) out.add(segs.join(SEP));
    for (const k of keys) walk(node[k]!, [...segs, k]);
  };
  if (tree) walk(tree, []);
  return out;
}

/** `.spec.containers[name="web"].image`, as the API server names a field in a conflict. */
export function pathName(path: string): string {
  return path
    .split(SEP)
    .filter((s) => s !== '.')
    .map((s) => {
      if (s.startsWith('f:')) return `.${s.slice(2)}`;
      const kv = JSON.parse(s.slice(2)) as Obj;
      return `[${Object.entries(kv)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}]`;
    })
    .join('');
}

const entriesOf = (obj: KubeObject): ManagedFieldsEntry[] =>
  Array.isArray(obj.metadata.managedFields) ? (obj.metadata.managedFields as ManagedFieldsEntry[]) : [];

function setEntries(obj: KubeObject, entries: ManagedFieldsEntry[]): void {
  const kept = entries.filter((e) => Object.keys(e.fieldsV1).length > 0);
  if (kept.length) obj.metadata.managedFields = kept;
  else delete obj.metadata.managedFields;
}

const time = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/**
 * Records an Update by `manager` from `old` to `next` in next's managedFields: the fields it
 * changed become its own and leave every other manager. `old` undefined is a create.
 */
export function recordUpdate(
  old: KubeObject | undefined,
  next: KubeObject,
  manager: string,
  operation: 'Apply' | 'Update',
  now: number,
  schema: PatchSchema,
  /** For an Apply that creates the object: the applied configuration, whose fields the manager owns. */
  config?: KubeObject,
): void {
  const before = old ? leaves(old, schema) : new Map<string, unknown>();
  const after = leaves(next, schema);
  const changed = new Set<string>();
  for (const [p, v] of after) if (!before.has(p) || !isDeepStrictEqual(before.get(p), v)) changed.add(p);
  // An Apply onto an existing object comes with applyConfig's entries (its own one set to the config).
  const entries = (operation === 'Apply' && old ? entriesOf(next) : old ? entriesOf(old) : []).map((e) => ({
    ...e,
  }));
  // Fields that no longer exist are owned by no one.
  for (const e of entries) {
    const owned = [...fromFieldsV1(e.fieldsV1)].filter(
      (p) => after.has(p) && !(changed.has(p) && e.manager !== manager),
    );
    e.fieldsV1 = toFieldsV1(owned);
  }
  if (operation === 'Update' && changed.size) {
    let mine = entries.find((e) => e.manager === manager && e.operation === 'Update');
    if (!mine) {
      mine = {
        manager,
        operation: 'Update',
        apiVersion: next.apiVersion ?? 'v1',
        time: '',
        fieldsType: 'FieldsV1',
        fieldsV1: {},
      };
      entries.push(mine);
    }
    mine.fieldsV1 = toFieldsV1(new Set([...fromFieldsV1(mine.fieldsV1), ...changed]));
    mine.time = time(now);
  }
  if (operation === 'Apply' && !old) {
    entries.push({
      manager,
      operation: 'Apply',
      apiVersion: next.apiVersion ?? 'v1',
      time: time(now),
      fieldsType: 'FieldsV1',
      fieldsV1: toFieldsV1(leaves(config ?? next, schema).keys()),
    });
  }
  setEntries(next, entries);
}

/**
 * Server-side apply of `config` by `manager` onto `current`: 409 Conflict listing fields another
 * manager owns with a different value (unless `force`), fields this manager applied before and no
 * longer applies removed when no one else owns them, and the manager's Apply entry set to the config.
 */
export function applyConfig(
  current: KubeObject,
  config: KubeObject,
  manager: string,
  force: boolean,
  schema: PatchSchema,
  now = Date.now(),
): KubeObject {
  const want = leaves(config, schema);
  const have = leaves(current, schema);
  const entries = entriesOf(current).map((e) => ({ ...e, paths: fromFieldsV1(e.fieldsV1) }));
  const mine = entries.find((e) => e.manager === manager && e.operation === 'Apply');
  const others = entries.filter((e) => e !== mine);
  const conflicts: StatusCause[] = [];
  for (const [p, v] of want) {
    if (p.endsWith(`${SEP}.`) || p === '.' || !have.has(p) || isDeepStrictEqual(have.get(p), v)) continue;
    for (const e of others) {
      if (!e.paths.has(p)) continue;
      if (force) e.paths.delete(p);
      else
        conflicts.push({
          reason: 'FieldManagerConflict',
          message: `conflict with "${e.manager}"${e.operation === 'Update' ? ' using v1' : ''}`,
          field: pathName(p),
        });
    }
  }
  if (conflicts.length) {
    const n = conflicts.length;
    throw new StatusError(
      409,
      'Conflict',
      `Apply failed with ${n} conflict${n > 1 ? 's' : ''}: ${conflicts.map((c) => `${c.message}: ${c.field}`).join('\n')}`,
      { causes: conflicts },
    );
  }
  // Start from the current object minus what this manager alone applied before and applies no more.
  let next = structuredClone(current) as Obj;
  const ownedElsewhere = new Set(others.flatMap((e) => [...e.paths]));
  for (const p of mine?.paths ?? []) {
    if (!want.has(p) && !ownedElsewhere.has(p)) next = removePath(next, p.split(SEP), schema);
  }
  next = applyStrategicMergePatch(next, stripServerFields(config), schema);
  const result = next as KubeObject;
  const kept = others.map(({ paths, ...e }) => ({ ...e, fieldsV1: toFieldsV1(paths) }));
  kept.push({
    manager,
    operation: 'Apply',
    apiVersion: config.apiVersion ?? 'v1',
    time: time(now),
    fieldsType: 'FieldsV1',
    fieldsV1: toFieldsV1(want.keys()),
  });
  setEntries(result, kept);
  return result;
}

function stripServerFields(config: KubeObject): Obj {
  const c = structuredClone(config) as Obj & KubeObject;
  delete c.status;
  delete c.metadata.managedFields;
  return c;
}

/** `obj` without the field at `segs` (a keyed list item goes whole when its `.` is removed). */
function removePath(obj: Obj, segs: string[], schema: PatchSchema, dotted = ''): Obj {
  const [seg, ...rest] = segs;
  if (!seg || seg === '.') return obj;
  if (seg.startsWith('f:')) {
    const k = seg.slice(2);
    if (!(k in obj)) return obj;
    if (!rest.length || rest[0] === '.') {
      if (!rest.length || (isObj(obj[k]) && Object.keys(obj[k] as Obj).length === 0)) delete obj[k];
      return obj;
    }
    const child = obj[k];
    const path = dotted ? `${dotted}.${k}` : k;
    if (Array.isArray(child)) {
      const key = schema[path]?.mergeKey;
      const want = JSON.parse(rest[0]!.slice(2)) as Obj;
      const i = child.findIndex(
        (it) => isObj(it) && key !== undefined && isDeepStrictEqual(it[key], want[key]),
      );
      if (i < 0) return obj;
      if (rest.length === 2 && rest[1] === '.') child.splice(i, 1);
      else removePath(child[i] as Obj, rest.slice(1), schema, path);
    } else if (isObj(child)) removePath(child, rest, schema, path);
  }
  return obj;
}
