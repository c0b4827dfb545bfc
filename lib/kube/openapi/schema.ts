// A small builder for OpenAPI v3 schemas (the subset `kubectl explain` reads: types, descriptions,
// properties, items, maps, references and the Kubernetes extensions). Outpost's schemas are code,
// built on the first /openapi request, never parsed from text at start-up.

export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  description?: string;
  enum?: string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  additionalProperties?: Schema;
  allOf?: { $ref: string }[];
  [extension: `x-kubernetes-${string}`]: unknown;
}

export const REF_PREFIX = '#/components/schemas/';

export const str = (description: string, values?: string[]): Schema =>
  values ? { type: 'string', description, enum: values } : { type: 'string', description };

export const int = (description: string, format: 'int32' | 'int64' = 'int32'): Schema => ({
  type: 'integer',
  format,
  description,
});

export const bool = (description: string): Schema => ({ type: 'boolean', description });

/** An RFC 3339 time, as metav1.Time serializes. */
export const time = (description: string): Schema => ({ type: 'string', format: 'date-time', description });

/** A reference to a named schema; the description is the field's own. */
export const ref = (name: string, description?: string): Schema => {
  const to = { allOf: [{ $ref: `${REF_PREFIX}${name}` }] };
  return description ? { description, ...to } : to;
};

export const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';
export const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

/** A number or a string (a port by number or name). */
export const intOrString = (description: string): Schema => ref(INT_OR_STRING, description);

/** A resource quantity (`100m`, `64Mi`), written as a string or a number. */
export const quantity = (description?: string): Schema => ref(QUANTITY, description);

export const list = (items: Schema, description: string): Schema => ({ type: 'array', description, items });

/** A list of objects merged item by item by `key` (strategic merge and server-side apply). */
export const keyedList = (items: Schema, key: string, description: string): Schema => ({
  ...list(items, description),
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': [key],
  'x-kubernetes-patch-merge-key': key,
  'x-kubernetes-patch-strategy': 'merge',
});

export const strings = (description: string): Schema => list({ type: 'string' }, description);

export const map = (values: Schema, description: string): Schema => ({
  type: 'object',
  description,
  additionalProperties: values,
});

export const stringMap = (description: string): Schema => map({ type: 'string' }, description);

/** Free-form JSON kept as written. */
export const anyObject = (description: string): Schema => ({
  type: 'object',
  description,
  'x-kubernetes-preserve-unknown-fields': true,
});

export const obj = (description: string, properties: Record<string, Schema>, required?: string[]): Schema =>
  required
    ? { type: 'object', description, properties, required }
    : { type: 'object', description, properties };

/** The fields every top-level object and list starts with. */
export const typeMeta = {
  apiVersion: str('The versioned schema of this representation of the object.'),
  kind: str('The kind of object this is, in CamelCase.'),
};

/** A kind's schema, found by `kubectl explain` through its group-version-kind. */
export function kind(
  group: string,
  version: string,
  name: string,
  description: string,
  properties: Record<string, Schema>,
): Schema {
  return {
    ...obj(description, { ...typeMeta, ...properties }),
    'x-kubernetes-group-version-kind': [{ group, kind: name, version }],
  };
}

/** The list kind of `item`: `metadata` (ListMeta) and `items`. */
export const listKind = (group: string, version: string, item: string, itemSchema: string): Schema =>
  kind(group, version, `${item}List`, `A list of ${item} objects.`, {
    metadata: ref('io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta', 'Standard list metadata.'),
    items: list(ref(itemSchema), `The ${item} objects.`),
  });
