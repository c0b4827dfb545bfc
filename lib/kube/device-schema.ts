// The one definition of the devices.kubeedge.io/v1beta1 schemas: the CRDs the lab (and a cluster
// admin) applies are generated from it (`npm run gen` → deploy/crds/), and the local API validates
// device and model writes against it, so the node refuses what the API server would refuse.
// Field names and types follow KubeEdge's v1beta1 API (kubeedge/api apis/devices/v1beta1); the
// `required` lists are the fields upstream's comments call required and that no valid device omits.
import { DEVICE_GROUP, DEVICE_VERSION } from './devices.ts';
import type { JsonSchema } from './openapi-validate.ts';

// Every field carries its description: the CRDs hold them (so `kubectl explain` on a cluster reads
// them) and Outpost's OpenAPI v3 document is derived from these schemas (lib/kube/openapi/devices.ts).
const str = (description: string, values?: string[]): JsonSchema =>
  values ? { type: 'string', enum: values, description } : { type: 'string', description };
const nanos = (what: string): JsonSchema => ({
  type: 'integer',
  format: 'int64',
  description: `${what}, in nanoseconds (Go time.Duration).`,
});
const bool = (description: string): JsonSchema => ({ type: 'boolean', description });
const obj = (
  description: string,
  properties: Record<string, JsonSchema>,
  required?: string[],
): JsonSchema => ({
  type: 'object',
  description,
  properties,
  ...(required ? { required } : {}),
});
const list = (description: string, items: JsonSchema): JsonSchema => ({ type: 'array', description, items });
const stringMap = (description: string): JsonSchema => ({
  type: 'object',
  description,
  additionalProperties: { type: 'string' },
});
const anyObject = (description: string): JsonSchema => ({
  type: 'object',
  description,
  'x-kubernetes-preserve-unknown-fields': true,
});
const twinProperty = (description: string) =>
  obj(
    description,
    { value: str('The value, as a string.'), metadata: stringMap('Metadata such as timestamp and type.') },
    ['value'],
  );
const meta = {
  apiVersion: str('The versioned schema of this representation of the object.'),
  kind: str('The kind of object this is, in CamelCase.'),
  // The API server refuses anything but name and generateName under a CRD's metadata.
  metadata: { type: 'object' },
} satisfies Record<string, JsonSchema>;

/** The v1beta1 Device schema (spec from the node's point of view, status as the node reports it). */
export const DEVICE_SCHEMA: JsonSchema = obj('A device driven by a mapper through DMI.', {
  ...meta,
  spec: obj('The desired device.', {
    deviceModelRef: obj('The model of the device.', { name: str('Name of the DeviceModel.') }),
    nodeName: str('The node the device is attached to.'),
    properties: list(
      'Properties of the device and their desired values.',
      obj(
        'One property of a device.',
        {
          name: str('Name of the property, as in the model.'),
          desired: twinProperty('The value the mapper writes to the device.'),
          visitors: obj('How the mapper reads the property.', {
            protocolName: str('The protocol.'),
            configData: anyObject('Protocol settings of the property.'),
          }),
          reportCycle: nanos('How often the value is reported'),
          collectCycle: nanos('How often the value is read from the device'),
          reportToCloud: bool('Whether the value goes to the cloud.'),
          pushMethod: anyObject('Where the mapper pushes values (MQTT, HTTP, ...).'),
        },
        ['name'],
      ),
    ),
    methods: list(
      'Methods the device offers, each a set of properties written together.',
      obj(
        'One method.',
        {
          name: str('Name of the method.'),
          description: str('What it does.'),
          propertyNames: list('The properties it writes.', { type: 'string' }),
        },
        ['name'],
      ),
    ),
    protocol: obj('How the mapper reaches the device.', {
      protocolName: str('The protocol, which picks the mapper.'),
      configData: anyObject('Protocol settings, passed to the mapper as written.'),
    }),
  }),
  status: obj('The reported device.', {
    twins: list(
      'Reported and desired value per property.',
      obj(
        'Reported and desired value of a property.',
        {
          propertyName: str('The property.'),
          reported: twinProperty('The value the mapper last reported.'),
          observedDesired: twinProperty('The desired value the mapper has seen.'),
        },
        ['propertyName'],
      ),
    ),
    state: str('State the mapper reports (e.g. online, offline).'),
    lastOnlineTime: str('When the device was last online.'),
  }),
});

/** Property types a model may declare (upstream's PropertyType enum). */
export const PROPERTY_TYPES = ['INT', 'FLOAT', 'DOUBLE', 'STRING', 'BOOLEAN', 'BYTES', 'STREAM'];
/** Access modes (upstream's PropertyAccessMode enum). */
export const ACCESS_MODES = ['ReadWrite', 'ReadOnly'];

/** The v1beta1 DeviceModel schema. */
export const DEVICE_MODEL_SCHEMA: JsonSchema = obj('The properties shared by devices of one kind.', {
  ...meta,
  spec: obj('The model.', {
    protocol: str('The protocol of the devices.'),
    properties: list(
      'Properties of the devices.',
      obj(
        'One property.',
        {
          name: str('Name of the property.'),
          description: str('What it is.'),
          type: str('Value type.', PROPERTY_TYPES),
          accessMode: str('Whether it can be written.', ACCESS_MODES),
          minimum: str('Minimum value.'),
          maximum: str('Maximum value.'),
          unit: str('Unit of the value.'),
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
