// Names shared by the core group's schemas: the schema name prefix, references to it, key selectors.
import { bool, list, obj, ref, type Schema, str } from './schema.ts';

export const V1 = 'io.k8s.api.core.v1.';
/** A reference to a core/v1 schema. */
export const r = (name: string, description?: string): Schema => ref(`${V1}${name}`, description);

export const keyRef = (what: string) =>
  obj(
    `Selects a key of a ${what}.`,
    {
      name: str(`Name of the ${what} in the pod's namespace.`),
      key: str('The key to select.'),
      optional: bool(`Whether the ${what} or its key may be missing.`),
    },
    ['key'],
  );

export const keyToPath = list(r('KeyToPath'), 'Keys to project, each to a path; all keys when empty.');
