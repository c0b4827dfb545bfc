// Server-side apply (`application/apply-patch+yaml`, kubectl apply --server-side) for every kind
// that supports it: the field manager is required, a missing object is created from the
// configuration, an existing one gets the configuration merged by applyConfig (conflicts 409,
// `force=true` takes the fields over). Each kind supplies how it reads, creates and updates.
import { applyConfig } from '#lib/kube/managed-fields.ts';
import { StatusError } from '#lib/kube/status.ts';
import type { PatchSchema } from '#lib/kube/strategic-merge-schema.ts';
import type { KubeObject } from '#lib/kube/types.ts';
import type { AppContext } from './env.ts';
import { checkNames } from './write-options.ts';

/** How one kind takes part in an apply. */
export interface ApplyTarget<T extends KubeObject, R> {
  /** The current object (after refusing foreign owners), or undefined when it does not exist. */
  current(): T | undefined;
  /** Creates the object from the applied configuration, owned by `manager` (operation Apply). */
  create(config: T, manager: string): R;
  /** Stores `next` (the configuration applied onto `current`) as an Apply by `manager`. */
  update(current: T, next: T, manager: string): R;
}

/** The field manager of an apply: the API server requires one (422 on PatchOptions otherwise). */
export function applyManager(c: AppContext): string {
  const manager = c.req.query('fieldManager');
  if (manager) return manager;
  throw new StatusError(
    422,
    'Invalid',
    'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    {
      kind: 'PatchOptions',
      group: 'meta.k8s.io',
      causes: [
        {
          reason: 'FieldValueRequired',
          message: 'Required value: is required for apply patch',
          field: 'fieldManager',
        },
      ],
    },
  );
}

/** Applies `config` to the object `namespace/name` of `target`. */
export function serverSideApply<T extends KubeObject, R>(
  c: AppContext,
  config: T,
  namespace: string,
  name: string,
  schema: PatchSchema,
  target: ApplyTarget<T, R>,
): R {
  const manager = applyManager(c);
  checkNames(config.metadata, namespace, name);
  const current = target.current();
  if (!current) {
    config.metadata.name = name;
    return target.create(config, manager);
  }
  const force = c.req.query('force') === 'true';
  const next = applyConfig(current, config, manager, force, schema, c.var.now()) as T;
  return target.update(current, next, manager);
}
