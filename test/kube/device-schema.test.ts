import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEVICE_MODEL_SCHEMA, DEVICE_SCHEMA } from '#lib/kube/device-schema.ts';
import { DEVICES, deviceSchemas } from '#lib/kube/openapi/devices.ts';
import { REF_PREFIX } from '#lib/kube/openapi/schema.ts';
import { type JsonSchema, validateSchema } from '#lib/kube/openapi-validate.ts';
import { CRD_FILE, crdYaml } from '../../scripts/gen-crds.ts';

test('deploy/crds/devices.kubeedge.io.yaml is generated from the schema (run `npm run gen`)', () => {
  assert.is(readFileSync(CRD_FILE, 'utf8'), crdYaml());
});

const messages = (schema: typeof DEVICE_SCHEMA, v: unknown) =>
  validateSchema(schema, v).map((c) => `${c.field} ${c.reason}: ${c.message}`);

test('types, required fields and enums are reported as the API server words them', () => {
  assert.equal(
    messages(DEVICE_SCHEMA, {
      metadata: { name: 'd' },
      spec: {
        protocol: { protocolName: 7, configData: { anything: [1, { deep: true }] } },
        properties: [{ name: 'a', reportCycle: 1.5, desired: {} }, { reportToCloud: 'yes' }],
        unknownField: 1,
      },
    }).sort(),
    [
      'spec.properties[0].reportCycle FieldValueTypeInvalid: Invalid value: "number": spec.properties[0].reportCycle in body must be of type integer: "number"',
      'spec.properties[0].desired.value FieldValueRequired: Required value',
      'spec.properties[1].name FieldValueRequired: Required value',
      'spec.properties[1].reportToCloud FieldValueTypeInvalid: Invalid value: "string": spec.properties[1].reportToCloud in body must be of type boolean: "string"',
      'spec.protocol.protocolName FieldValueTypeInvalid: Invalid value: "integer": spec.protocol.protocolName in body must be of type string: "integer"',
    ].sort(),
  );
  assert.equal(
    messages(DEVICE_MODEL_SCHEMA, {
      spec: { properties: [{ name: 't', type: 'float', accessMode: 'ReadOnly' }] },
    }),
    [
      'spec.properties[0].type FieldValueNotSupported: Unsupported value: "float": supported values: "INT", "FLOAT", "DOUBLE", "STRING", "BOOLEAN", "BYTES", "STREAM"',
    ],
  );
  assert.equal(messages(DEVICE_MODEL_SCHEMA, { spec: { properties: 'x' } }), [
    'spec.properties FieldValueTypeInvalid: Invalid value: "string": spec.properties in body must be of type array: "string"',
  ]);
});

test('nulls are absent, unknown fields and preserved objects pass, patterns and bounds hold', () => {
  assert.equal(validateSchema(DEVICE_SCHEMA, { spec: { nodeName: null, extra: { x: 1 } } }), []);
  const s = {
    type: 'object' as const,
    properties: {
      n: { type: 'integer' as const, minimum: 1 },
      s: { type: 'string' as const, pattern: '^[a-z]+$' },
    },
  };
  assert.equal(
    validateSchema(s, { n: 0, s: 'A' }).map((c) => c.message),
    [
      'Invalid value: 0: n in body should be greater than or equal to 1',
      'Invalid value: "A": s in body should match \'^[a-z]+$\'',
    ],
  );
});

/** Every field path with its type and enum, following the explain schemas' references. */
function fields(
  s: JsonSchema & { allOf?: { $ref: string }[] },
  all: Record<string, unknown>,
  path = '',
): string[] {
  let node = s;
  while (node.allOf?.[0]) node = all[node.allOf[0].$ref.replace(REF_PREFIX, '')] as typeof node;
  const here = path ? [`${path}: ${node.type ?? '?'}${node.enum ? ` ${node.enum.join('|')}` : ''}`] : [];
  if (path.endsWith('configData') || path.endsWith('pushMethod') || path === 'metadata') return here;
  const props = Object.entries(node.properties ?? {}).flatMap(([k, v]) =>
    fields(v, all, path ? `${path}.${k}` : k),
  );
  const items = node.items ? fields(node.items, all, `${path}[]`) : [];
  return [...here, ...props, ...items].sort();
}

test('kubectl explain describes the fields the CRD schema validates (same names, types, enums)', () => {
  const all = deviceSchemas() as Record<string, unknown>;
  for (const [kind, schema] of [
    ['Device', DEVICE_SCHEMA],
    ['DeviceModel', DEVICE_MODEL_SCHEMA],
  ] as const) {
    const explained = fields(all[`${DEVICES}${kind}`] as JsonSchema, all).filter(
      (f) => !f.startsWith('metadata.'),
    );
    assert.equal(explained, fields(schema, all), kind);
  }
});

test.run();
