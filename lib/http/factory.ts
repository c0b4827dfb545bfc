import { zValidator } from '@hono/zod-validator';
import { createFactory } from 'hono/factory';
import type * as z from 'zod';
import { badRequest, StatusError } from '#lib/kube/status.ts';
import type { AppEnv } from './env.ts';

/** Route files build their handlers with this factory so `c.var` and validated input are typed. */
export const factory = createFactory<AppEnv>();

function causes(issues: readonly z.core.$ZodIssue[]) {
  return issues.map((i) => ({
    reason: 'FieldValueInvalid',
    field: i.path.map(String).join('.'),
    message: i.message,
  }));
}

/** The 400 BadRequest Status for query parameters that failed a schema, one cause per parameter. */
export function queryError(issues: readonly z.core.$ZodIssue[]): StatusError {
  const list = causes(issues);
  return badRequest(`invalid query: ${list.map((c) => `${c.field}: ${c.message}`).join(', ')}`, {
    causes: list,
  });
}

/** Validates query parameters; a bad value is a 400 BadRequest Status naming the parameter. */
export const query = <T extends z.ZodType>(schema: T) =>
  zValidator('query', schema, (result) => {
    if (!result.success) throw queryError(result.error.issues);
  });

/** Validates a JSON body; a schema violation is a 422 Invalid Status with one cause per field. */
export const body = <T extends z.ZodType>(schema: T, kind: string) =>
  zValidator('json', schema, (result) => {
    if (!result.success) {
      const list = causes(result.error.issues);
      throw new StatusError(
        422,
        'Invalid',
        `${kind} is invalid: ${list.map((c) => `${c.field || '<body>'}: ${c.message}`).join(', ')}`,
        { kind, causes: list },
      );
    }
  });
