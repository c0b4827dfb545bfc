// Device and DeviceModel (devices.kubeedge.io/v1beta1) as Outpost serves them (lib/kube/devices.ts).
// Derived from the CRD schemas (lib/kube/device-schema.ts), the one definition of their fields,
// types, enums, required fields and descriptions; only what OpenAPI adds over a CRD is added here.
import { DEVICE_MODEL_SCHEMA, DEVICE_SCHEMA } from '../device-schema.ts';
import { DEVICE_GROUP, DEVICE_VERSION } from '../devices.ts';
import type { JsonSchema } from '../openapi-validate.ts';
import { metaSchemas, objectMeta } from './meta.ts';
import { keyedList, kind, listKind, type Schema } from './schema.ts';

export const DEVICES = 'io.kubeedge.devices.v1beta1.';

/**
 * One CRD schema node as an OpenAPI schema. A list of objects that require exactly one field is
 * keyed by it (merged item by item, as the hand-written schemas declared for properties and twins).
 */
function toOpenApi(s: JsonSchema): Schema {
  const out: Schema = {};
  if (s.type) out.type = s.type;
  if (s.format) out.format = s.format;
  if (s.description) out.description = s.description;
  if (s.enum) out.enum = s.enum.map(String);
  if (s.properties)
    out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, toOpenApi(v)]));
  if (s.required) out.required = [...s.required];
  if (s.additionalProperties) out.additionalProperties = toOpenApi(s.additionalProperties);
  if (s['x-kubernetes-preserve-unknown-fields']) out['x-kubernetes-preserve-unknown-fields'] = true;
  if (s.items) {
    const key = s.items.type === 'object' && s.items.required?.length === 1 ? s.items.required[0] : undefined;
    return key
      ? keyedList(toOpenApi(s.items), key, s.description ?? '')
      : { ...out, items: toOpenApi(s.items) };
  }
  return out;
}

/** A kind's schema from its CRD schema; `metadata` refers to ObjectMeta. */
function kindOf(name: string, schema: JsonSchema): Schema {
  const { apiVersion, kind: _kind, metadata, ...fields } = schema.properties ?? {};
  const properties = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, toOpenApi(v)]));
  return kind(DEVICE_GROUP, DEVICE_VERSION, name, schema.description ?? name, {
    metadata: objectMeta(),
    ...properties,
  });
}

/** Every schema of devices.kubeedge.io/v1beta1. */
export function deviceSchemas(): Record<string, Schema> {
  return {
    ...metaSchemas(),
    [`${DEVICES}Device`]: kindOf('Device', DEVICE_SCHEMA),
    [`${DEVICES}DeviceModel`]: kindOf('DeviceModel', DEVICE_MODEL_SCHEMA),
    [`${DEVICES}DeviceList`]: listKind(DEVICE_GROUP, DEVICE_VERSION, 'Device', `${DEVICES}Device`),
    [`${DEVICES}DeviceModelList`]: listKind(
      DEVICE_GROUP,
      DEVICE_VERSION,
      'DeviceModel',
      `${DEVICES}DeviceModel`,
    ),
  };
}
