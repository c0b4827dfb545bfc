// A small validator for the structural OpenAPI v3 schemas of CustomResourceDefinitions: type,
// required, enum, pattern, minimum/maximum, items, properties, additionalProperties and
// x-kubernetes-preserve-unknown-fields, with the API server's field paths, reasons and messages
// (apiextensions-apiserver turns kube-openapi's errors into field.TypeInvalid, field.Required,
// field.NotSupported and field.Invalid). Unknown fields are not errors, as there.
import type { StatusCause } from './status.ts';

export interface JsonSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema;
  items?: JsonSchema;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

/** The JSON type name kube-openapi reports for a value. */
function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

const fits = (type: JsonSchema['type'], v: unknown): boolean => {
  const t = typeOf(v);
  if (type === 'number') return t === 'number' || t === 'integer';
  return t === type;
};

const q = (v: unknown) => JSON.stringify(v);

/**
 * The causes `value` at `path` breaks in `schema`, in the API server's words. A null where an
 * object's field is optional counts as absent, as the API server's pruning and defaulting treat it.
 */
export function validateSchema(schema: JsonSchema, value: unknown, path = ''): StatusCause[] {
  const causes: StatusCause[] = [];
  walk(schema, value, path, causes);
  return causes;
}

function walk(s: JsonSchema, v: unknown, path: string, out: StatusCause[]): void {
  const where = path || '<root>';
  if (s.type && !fits(s.type, v)) {
    const actual = typeOf(v);
    out.push({
      field: path,
      reason: 'FieldValueTypeInvalid',
      message: `Invalid value: ${q(actual)}: ${where} in body must be of type ${s.type}: ${q(actual)}`,
    });
    return;
  }
  if (s.enum && !s.enum.some((e) => e === v)) {
    out.push({
      field: path,
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${q(v)}: supported values: ${s.enum.map(q).join(', ')}`,
    });
  }
  if (typeof v === 'string' && s.pattern && !new RegExp(s.pattern, 'u').test(v)) {
    out.push({
      field: path,
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${q(v)}: ${where} in body should match '${s.pattern}'`,
    });
  }
  if (typeof v === 'number') {
    if (s.minimum !== undefined && v < s.minimum)
      out.push({
        field: path,
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${v}: ${where} in body should be greater than or equal to ${s.minimum}`,
      });
    if (s.maximum !== undefined && v > s.maximum)
      out.push({
        field: path,
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${v}: ${where} in body should be less than or equal to ${s.maximum}`,
      });
  }
  if (Array.isArray(v) && s.items) {
    const items = s.items;
    v.forEach((item, i) => {
      walk(items, item, `${path}[${i}]`, out);
    });
    return;
  }
  if (typeOf(v) !== 'object') return;
  const o = v as Record<string, unknown>;
  for (const name of s.required ?? []) {
    if (o[name] === undefined || o[name] === null)
      out.push({ field: join(path, name), reason: 'FieldValueRequired', message: 'Required value' });
  }
  for (const [name, child] of Object.entries(o)) {
    if (child === undefined || child === null) continue;
    const sub = s.properties?.[name] ?? s.additionalProperties;
    if (sub) walk(sub, child, join(path, name), out);
  }
}

const join = (path: string, name: string) => (path ? `${path}.${name}` : name);
