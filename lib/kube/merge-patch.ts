// JSON merge patch (RFC 7386), what the API server applies for `application/merge-patch+json` and
// what kubectl edit sends for custom resources; plus the diff that produces one.
import { isDeepStrictEqual } from 'node:util';

type JsonObject = Record<string, unknown>;
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `target` with `patch` merged in: objects merge key by key, `null` deletes, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: JsonObject = isObject(target) ? structuredClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = applyMergePatch(out[key], value);
  }
  return out;
}

/** The merge patch that turns `from` into `to` (lists are replaced whole); `{}` when they are equal. */
export function createMergePatch(from: unknown, to: unknown): unknown {
  if (!isObject(from) || !isObject(to)) return structuredClone(to);
  const patch: JsonObject = {};
  for (const key of Object.keys(from)) if (!(key in to)) patch[key] = null;
  for (const [key, value] of Object.entries(to)) {
    if (!(key in from)) patch[key] = structuredClone(value);
    else if (!isDeepStrictEqual(from[key], value)) {
      patch[key] =
        isObject(from[key]) && isObject(value) ? createMergePatch(from[key], value) : structuredClone(value);
    }
  }
  return patch;
}

/** Whether a merge patch changes nothing. */
export const isEmptyPatch = (patch: unknown): boolean => isObject(patch) && Object.keys(patch).length === 0;
