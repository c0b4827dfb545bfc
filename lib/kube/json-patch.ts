// JSON Patch (RFC 6902), what the API server applies for `application/json-patch+json`: add, remove,
// replace, move, copy and test on JSON Pointers (RFC 6901). Errors are worded as apimachinery words them.
import { isDeepStrictEqual } from 'node:util';
import { StatusError } from './status.ts';

type Json = unknown;
interface Operation {
  op?: unknown;
  path?: unknown;
  from?: unknown;
  value?: unknown;
}

const unprocessable = (message: string) => new StatusError(422, 'Invalid', message);
const bad = (message: string) => new StatusError(400, 'BadRequest', message);

function tokens(pointer: unknown): string[] {
  if (typeof pointer !== 'string') throw bad('json patch: path must be a string');
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw bad(`json patch: invalid JSON pointer "${pointer}"`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

const isContainer = (v: unknown): v is Record<string, Json> | Json[] => typeof v === 'object' && v !== null;

function parentOf(
  doc: Json,
  path: string[],
  pointer: string,
): { parent: Record<string, Json> | Json[]; key: string } {
  let cur = doc;
  for (const t of path.slice(0, -1)) {
    const next = Array.isArray(cur)
      ? cur[Number(t)]
      : isContainer(cur)
        ? (cur as Record<string, Json>)[t]
        : undefined;
    if (!isContainer(next)) throw unprocessable(`doc is missing path: "${pointer}": missing value`);
    cur = next;
  }
  if (!isContainer(cur)) throw unprocessable(`doc is missing path: "${pointer}": missing value`);
  return { parent: cur, key: path.at(-1)! };
}

function index(list: Json[], key: string, pointer: string, adding: boolean): number {
  if (adding && key === '-') return list.length;
  const i = /^(0|[1-9]\d*)$/.test(key) ? Number(key) : Number.NaN;
  if (Number.isNaN(i) || i > list.length || (!adding && i === list.length))
    throw unprocessable(`Unable to access invalid index: ${key}: invalid index referenced: "${pointer}"`);
  return i;
}

function get(doc: Json, pointer: unknown): Json {
  const path = tokens(pointer);
  if (!path.length) return doc;
  const { parent, key } = parentOf(doc, path, String(pointer));
  if (Array.isArray(parent)) return parent[index(parent, key, String(pointer), false)];
  if (!Object.hasOwn(parent, key))
    throw unprocessable(`doc is missing key: "${String(pointer)}": missing value`);
  return parent[key];
}

function add(doc: Json, pointer: unknown, value: Json): Json {
  const path = tokens(pointer);
  if (!path.length) return structuredClone(value);
  const { parent, key } = parentOf(doc, path, String(pointer));
  if (Array.isArray(parent))
    parent.splice(index(parent, key, String(pointer), true), 0, structuredClone(value));
  else parent[key] = structuredClone(value);
  return doc;
}

function remove(doc: Json, pointer: unknown): Json {
  const path = tokens(pointer);
  if (!path.length) return null;
  const { parent, key } = parentOf(doc, path, String(pointer));
  if (Array.isArray(parent)) parent.splice(index(parent, key, String(pointer), false), 1);
  else {
    if (!Object.hasOwn(parent, key))
      throw unprocessable(`Unable to remove nonexistent key: ${key}: missing value`);
    delete parent[key];
  }
  return doc;
}

/** `doc` with the RFC 6902 `operations` applied (the input is not modified). */
export function applyJsonPatch<T>(doc: T, operations: unknown): T {
  if (!Array.isArray(operations))
    throw bad('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let out: Json = structuredClone(doc);
  for (const raw of operations as Operation[]) {
    const op = raw?.op;
    switch (op) {
      case 'add':
        out = add(out, raw.path, raw.value);
        break;
      case 'remove':
        out = remove(out, raw.path);
        break;
      case 'replace':
        get(out, raw.path);
        out = add(remove(out, raw.path), raw.path, raw.value);
        break;
      case 'move': {
        const value = get(out, raw.from);
        out = add(remove(out, raw.from), raw.path, value);
        break;
      }
      case 'copy':
        out = add(out, raw.path, get(out, raw.from));
        break;
      case 'test':
        if (!isDeepStrictEqual(get(out, raw.path), raw.value))
          throw unprocessable(`the server rejected our request due to an error in our request`);
        break;
      default:
        throw bad(`Unexpected kind: ${String(op)}`);
    }
  }
  return out as T;
}
