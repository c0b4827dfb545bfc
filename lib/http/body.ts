import { applyJsonPatch } from '#lib/kube/json-patch.ts';
import { applyMergePatch } from '#lib/kube/merge-patch.ts';
import { decodeKubeProtobuf, isKubeProtobuf } from '#lib/kube/protobuf.ts';
import { badRequest, StatusError } from '#lib/kube/status.ts';
import { applyStrategicMergePatch, type PatchSchema } from '#lib/kube/strategic-merge.ts';
import type { AppContext } from './env.ts';

/** The media type of the request body, without parameters. */
export const contentType = (c: AppContext): string =>
  (c.req.header('content-type') ?? '').split(';')[0]!.trim();

/** The request body as JSON (or YAML, which the API server also accepts); malformed is a 400. */
export async function readBody(c: AppContext, type = contentType(c)): Promise<unknown> {
  if (/protobuf/.test(type)) {
    const raw = Buffer.from(await c.req.arrayBuffer());
    if (!isKubeProtobuf(raw)) throw badRequest('the protobuf body lacks the k8s envelope');
    return decodeKubeProtobuf(raw);
  }
  const text = await c.req.text();
  const yaml = /yaml/.test(type);
  // The YAML parser is loaded at the first YAML body (lib/kube/yaml.ts).
  const decode: (text: string) => unknown = yaml ? (await import('#lib/kube/yaml.ts')).parse : JSON.parse;
  try {
    return decode(text);
  } catch (e) {
    const what = yaml ? 'YAML' : 'JSON';
    throw badRequest(
      `the body of the request could not be decoded as ${what}: ${(e as Error).message.split('\n')[0]}`,
    );
  }
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export type PatchType = 'merge' | 'strategic' | 'json' | 'apply';

const PATCH_TYPES: Record<string, PatchType> = {
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/json-patch+json': 'json',
  'application/apply-patch+yaml': 'apply',
};

/** The patch type the Content-Type names; anything else is 415 with the accepted list, as the API server says. */
export function patchType<T extends PatchType>(c: AppContext, accepted: readonly T[]): T {
  const type = PATCH_TYPES[contentType(c)] as T | undefined;
  if (!type || !accepted.includes(type)) {
    const names = Object.entries(PATCH_TYPES)
      .filter(([, t]) => (accepted as readonly PatchType[]).includes(t))
      .map(([n]) => n);
    throw new StatusError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${names.join(', ')}`,
    );
  }
  return type;
}

/** `current` with a merge, strategic merge or JSON patch applied (server-side apply is handled apart). */
export function applyPatch<T>(
  current: T,
  type: Exclude<PatchType, 'apply'>,
  patch: unknown,
  schema?: PatchSchema,
): T {
  if (type === 'json') return applyJsonPatch(current, patch);
  if (!isObject(patch)) throw badRequest('the patch must be a JSON object');
  if (type === 'merge') return applyMergePatch(current, patch) as T;
  return applyStrategicMergePatch(current, patch, schema);
}
