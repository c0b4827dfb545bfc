// The one definition of the devices.kubeedge.io/v1beta1 schemas: the CRDs the lab (and a cluster
// admin) applies are generated from it (`npm run gen` → deploy/crds/), and the local API validates
// device and model writes against it, so the node refuses what the API server would refuse.
// Field names and types follow KubeEdge's v1beta1 API (kubeedge/api apis/devices/v1beta1); the
// `required` lists are the fields upstream's comments call required and that no valid device omits.
import { DEVICE_GROUP, DEVICE_VERSION } from './devices.ts';
import type { JsonSchema } from './openapi-validate.ts';

const str: JsonSchema = { type: 'string' };
const int64: JsonSchema = { type: 'integer', format: 'int64' };
const bool: JsonSchema = { type: 'boolean' };
const obj = (properties: Record<string, JsonSchema>, required?: string[]): JsonSchema => ({
  type: 'object',
  properties,
  ...(required ? { required } : {}),
});
const list = (items: JsonSchema): JsonSchema => ({ type: 'array', items });
const stringMap: JsonSchema = { type: 'object', additionalProperties: str };
const anyObject: JsonSchema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
const twinProperty = obj({ value: str, metadata: stringMap }, ['value']);
const meta = { apiVersion: str, kind: str, metadata: { type: 'object' } } satisfies Record<
  string,
  JsonSchema
>;

/** The v1beta1 Device schema (spec from the node's point of view, status as the node reports it). */
export const DEVICE_SCHEMA: JsonSchema = obj({
  ...meta,
  spec: obj({
    deviceModelRef: obj({ name: str }),
    nodeName: str,
    properties: list(
      obj(
        {
          name: str,
          desired: twinProperty,
          visitors: obj({ protocolName: str, configData: anyObject }),
          reportCycle: int64,
          collectCycle: int64,
          reportToCloud: bool,
          pushMethod: anyObject,
        },
        ['name'],
      ),
    ),
    methods: list(obj({ name: str, description: str, propertyNames: list(str) }, ['name'])),
    protocol: obj({ protocolName: str, configData: anyObject }),
  }),
  status: obj({
    twins: list(
      obj({ propertyName: str, reported: twinProperty, observedDesired: twinProperty }, ['propertyName']),
    ),
    state: str,
    lastOnlineTime: str,
  }),
});

/** Property types a model may declare (upstream's PropertyType enum). */
export const PROPERTY_TYPES = ['INT', 'FLOAT', 'DOUBLE', 'STRING', 'BOOLEAN', 'BYTES', 'STREAM'];
/** Access modes (upstream's PropertyAccessMode enum). */
export const ACCESS_MODES = ['ReadWrite', 'ReadOnly'];

/** The v1beta1 DeviceModel schema. */
export const DEVICE_MODEL_SCHEMA: JsonSchema = obj({
  ...meta,
  spec: obj({
    protocol: str,
    properties: list(
      obj(
        {
          name: str,
          description: str,
          type: { type: 'string', enum: PROPERTY_TYPES },
          accessMode: { type: 'string', enum: ACCESS_MODES },
          minimum: str,
          maximum: str,
          unit: str,
        },
        ['name'],
      ),
    ),
  }),
});

/** A CustomResourceDefinition (apiextensions.k8s.io/v1) for one kind of the group. */
function crd(kind: string, plural: string, schema: JsonSchema, status: boolean, shortNames?: string[]) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${DEVICE_GROUP}` },
    spec: {
      group: DEVICE_GROUP,
      names: {
        kind,
        listKind: `${kind}List`,
        plural,
        singular: kind.toLowerCase(),
        ...(shortNames ? { shortNames } : {}),
      },
      scope: 'Namespaced',
      versions: [
        {
          name: DEVICE_VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: schema },
          // The node reports twins and state on the status subresource, never touching the spec.
          ...(status ? { subresources: { status: {} } } : {}),
        },
      ],
    },
  };
}

/** The Device and DeviceModel CRDs, as deploy/crds/devices.kubeedge.io.yaml holds them. */
export const deviceCrds = () => [
  crd('DeviceModel', 'devicemodels', DEVICE_MODEL_SCHEMA, false),
  crd('Device', 'devices', DEVICE_SCHEMA, true),
];
