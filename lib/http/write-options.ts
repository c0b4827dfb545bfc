import * as z from 'zod';
import { badRequest, conflict, StatusError } from '#lib/kube/status.ts';
import type { Source } from '#lib/store/pods.ts';
import type { AppContext } from './env.ts';

/** Query parameters every write accepts (metav1.CreateOptions, UpdateOptions, PatchOptions). */
export const writeQuery = z.object({
  dryRun: z.string().optional(),
  fieldManager: z.string().max(128).optional(),
  fieldValidation: z.enum(['', 'Ignore', 'Warn', 'Strict']).optional(),
  force: z.string().optional(),
  pretty: z.string().optional(),
});

/** The options kind a verb's query parameters are validated as (named in a 422's message). */
const OPTIONS_KIND: Record<string, string> = {
  POST: 'CreateOptions',
  PUT: 'UpdateOptions',
  PATCH: 'PatchOptions',
  DELETE: 'DeleteOptions',
};

/**
 * Whether the call is a dry run; the only dry-run value the API server knows is `All`, and any
 * other is 422 Invalid on its options kind, as kube-apiserver answers.
 */
export function isDryRun(values: readonly string[] | undefined, method = 'POST'): boolean {
  if (!values?.length) return false;
  const bad = values.filter((v) => v !== 'All');
  if (bad.length) {
    const kind = OPTIONS_KIND[method] ?? 'CreateOptions';
    const message = `Unsupported value: []string{${bad.map((v) => JSON.stringify(v)).join(', ')}}: supported values: "All"`;
    throw new StatusError(422, 'Invalid', `${kind}.meta.k8s.io "" is invalid: dryRun: ${message}`, {
      group: 'meta.k8s.io',
      kind,
      causes: [{ reason: 'FieldValueNotSupported', message, field: 'dryRun' }],
    });
  }
  return true;
}

/** `dryRun` from the query string (repeatable) or from a DeleteOptions body. */
export const dryRunOf = (c: AppContext, body?: { dryRun?: unknown }): boolean =>
  isDryRun(
    [...(c.req.queries('dryRun') ?? []), ...(Array.isArray(body?.dryRun) ? (body.dryRun as string[]) : [])],
    c.req.method,
  );

/**
 * The field manager of a write: the `fieldManager` parameter, else the user agent's program name
 * (the API server's default for updates), as it is recorded in managedFields.
 */
export function fieldManagerOf(c: AppContext): string {
  const given = c.req.query('fieldManager');
  if (given) return given;
  const ua = c.req.header('user-agent') ?? '';
  return ua.split('/')[0] || 'unknown';
}

/** An object stored on this node from somewhere else than the local API cannot be changed through it. */
export function refuseForeign(
  kind: string,
  name: string,
  owner: { source: Source; origin: string | null },
): void {
  if (owner.source === 'manifest') {
    throw conflict(
      `${kind} "${name}" is defined by the static manifest ${owner.origin ?? '(unknown file)'}: change it by editing that file`,
      { name, kind },
    );
  }
  if (owner.source === 'cloud') {
    throw new StatusError(
      403,
      'Forbidden',
      `${kind} "${name}" is managed by the cloud control plane (source=cloud): change it there, not on the node`,
      { name, kind },
    );
  }
}

/** 409 AlreadyExists, as the API server answers a create of a taken name. */
export const alreadyExists = (kind: string, name: string): StatusError =>
  new StatusError(409, 'AlreadyExists', `${kind} "${name}" already exists`, { name, kind });

/** 409 Conflict for a stale resourceVersion in an update. */
export const modified = (kind: string, name: string): StatusError =>
  conflict(
    `Operation cannot be fulfilled on ${kind} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, kind },
  );

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** `generateName` plus five random characters, the API server's name generator. */
export function generatedName(prefix: string): string {
  let s = prefix.length > 58 ? prefix.slice(0, 58) : prefix;
  for (let i = 0; i < 5; i++) s += GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)];
  return s;
}

/** The names in the body must agree with the URL, as the API server requires (400 BadRequest). */
export function checkNames(
  meta: { name?: unknown; namespace?: unknown },
  namespace: string,
  name?: string,
): void {
  if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace)
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  if (name !== undefined && meta.name !== undefined && meta.name !== name)
    throw badRequest(
      `the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`,
    );
}

/** The current time as the API server writes it (RFC 3339, seconds). */
export const timestamp = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
