import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { twinValueProblem, validateDevice, validateModel } from '#lib/dmi/validate.ts';
import type { Device, DeviceModel } from '#lib/kube/devices.ts';

const model: DeviceModel = {
  apiVersion: 'devices.kubeedge.io/v1beta1',
  kind: 'DeviceModel',
  metadata: { name: 'm' },
  spec: {
    properties: [
      { name: 'temperature', type: 'FLOAT', accessMode: 'ReadOnly' },
      { name: 'target', type: 'FLOAT', accessMode: 'ReadWrite', minimum: '5', maximum: '35' },
      { name: 'count', type: 'INT', accessMode: 'ReadWrite' },
      { name: 'switch', type: 'BOOLEAN', accessMode: 'ReadWrite' },
    ],
  },
};

const device = (properties: NonNullable<Device['spec']['properties']>): Device => ({
  apiVersion: 'devices.kubeedge.io/v1beta1',
  kind: 'Device',
  metadata: { name: 'd', namespace: 'default' },
  spec: { deviceModelRef: { name: 'm' }, protocol: { protocolName: 'virtual' }, properties },
});

test('desired values are checked against the property type and range', () => {
  const p = model.spec.properties!;
  assert.is(twinValueProblem('21.5', p[1]!), undefined);
  assert.is(twinValueProblem('hot', p[1]!), 'must be a number (property type FLOAT)');
  assert.is(twinValueProblem('40', p[1]!), 'must be at most 35');
  assert.is(twinValueProblem('1.5', p[2]!), 'must be an integer (property type INT)');
  assert.is(twinValueProblem('on', p[3]!), 'must be true or false (property type BOOLEAN)');
});

test('a device is checked against its model: unknown, read-only and invalid properties', () => {
  assert.equal(validateDevice(device([{ name: 'target', desired: { value: '20' } }]), model), []);
  const causes = validateDevice(
    device([
      { name: 'nope' },
      { name: 'temperature', desired: { value: '20' } },
      { name: 'switch', desired: { value: 'yes' } },
      { name: 'switch' },
    ]),
    model,
  );
  assert.equal(
    causes.map((c) => `${c.field} ${c.reason}`),
    [
      'spec.properties[0].name FieldValueNotFound',
      'spec.properties[1].desired.value FieldValueInvalid',
      'spec.properties[2].desired.value FieldValueInvalid',
      'spec.properties[3].name FieldValueDuplicate',
    ],
  );
});

test('required fields and names, as the API server would check them', () => {
  const d = device([]);
  d.spec.protocol = {};
  d.metadata.name = 'Bad_Name';
  assert.equal(
    validateDevice(d).map((c) => c.field),
    ['metadata.name', 'spec.protocol.protocolName'],
  );
  assert.equal(
    validateModel({
      ...model,
      spec: { properties: [{ name: 'x', type: 'COMPLEX', accessMode: 'Sometimes' }] },
    }).map((c) => c.reason),
    ['FieldValueNotSupported', 'FieldValueNotSupported'],
  );
});

test.run();
