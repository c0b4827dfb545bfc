// Device and DeviceModel (devices.kubeedge.io/v1beta1) as Outpost serves them (lib/kube/devices.ts).
import { DEVICE_GROUP, DEVICE_VERSION } from '../devices.ts';
import { metaSchemas, objectMeta } from './meta.ts';
import {
  anyObject,
  bool,
  int,
  keyedList,
  kind,
  list,
  listKind,
  obj,
  ref,
  type Schema,
  str,
  stringMap,
  strings,
  time,
} from './schema.ts';

export const DEVICES = 'io.kubeedge.devices.v1beta1.';
const r = (name: string, description?: string) => ref(`${DEVICES}${name}`, description);
const nanos = (what: string) => int(`${what}, in nanoseconds (Go time.Duration).`, 'int64');

function twinProperty(description: string): Schema {
  return obj(description, {
    value: str('The value, as a string.'),
    metadata: stringMap('Metadata such as timestamp and type.'),
  });
}

/** Every schema of devices.kubeedge.io/v1beta1. */
export function deviceSchemas(): Record<string, Schema> {
  const gvk = (name: string, description: string, properties: Record<string, Schema>) =>
    kind(DEVICE_GROUP, DEVICE_VERSION, name, description, { metadata: objectMeta(), ...properties });
  return {
    ...metaSchemas(),
    [`${DEVICES}Device`]: gvk('Device', 'A device driven by a mapper through DMI.', {
      spec: obj('The desired device.', {
        deviceModelRef: obj('The model of the device.', { name: str('Name of the DeviceModel.') }),
        nodeName: str('The node the device is attached to.'),
        protocol: obj('How the mapper reaches the device.', {
          protocolName: str('The protocol, which picks the mapper.'),
          configData: anyObject('Protocol settings, passed to the mapper as written.'),
        }),
        properties: keyedList(
          r('DeviceProperty'),
          'name',
          'Properties of the device and their desired values.',
        ),
        methods: list(
          obj(
            'One method of the device.',
            {
              name: str('Name of the method.'),
              description: str('What the method does.'),
              propertyNames: strings('The properties the method controls.'),
            },
            ['name'],
          ),
          'Methods of the device: named operations over some of its properties.',
        ),
      }),
      status: obj('The reported device.', {
        twins: keyedList(r('Twin'), 'propertyName', 'Reported and desired value per property.'),
        state: str('State the mapper reports (e.g. online, offline).'),
        lastOnlineTime: time('When the device was last online.'),
      }),
    }),
    [`${DEVICES}DeviceProperty`]: obj(
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
    [`${DEVICES}Twin`]: obj('Reported and desired value of a property.', {
      propertyName: str('The property.'),
      reported: twinProperty('The value the mapper last reported.'),
      observedDesired: twinProperty('The desired value the mapper has seen.'),
    }),
    [`${DEVICES}DeviceModel`]: gvk('DeviceModel', 'The properties shared by devices of one kind.', {
      spec: obj('The model.', {
        protocol: str('The protocol of the devices.'),
        properties: keyedList(
          obj(
            'One property.',
            {
              name: str('Name of the property.'),
              description: str('What it is.'),
              type: str('Value type.', ['INT', 'FLOAT', 'DOUBLE', 'STRING', 'BOOLEAN', 'BYTES', 'STREAM']),
              accessMode: str('Whether it can be written.', ['ReadWrite', 'ReadOnly']),
              minimum: str('Minimum value.'),
              maximum: str('Maximum value.'),
              unit: str('Unit of the value.'),
            },
            ['name'],
          ),
          'name',
          'Properties of the devices.',
        ),
      }),
    }),
    [`${DEVICES}DeviceList`]: listKind(DEVICE_GROUP, DEVICE_VERSION, 'Device', `${DEVICES}Device`),
    [`${DEVICES}DeviceModelList`]: listKind(
      DEVICE_GROUP,
      DEVICE_VERSION,
      'DeviceModel',
      `${DEVICES}DeviceModel`,
    ),
  };
}
