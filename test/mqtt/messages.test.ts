import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Device } from '#lib/kube/devices.ts';
import { componentOf, podState } from '#lib/mqtt/discovery.ts';
import { deviceId, hwUpdateId, OutpostTopics, parseDeviceId } from '#lib/mqtt/topics.ts';
import { parseTwinUpdate, twinDelta, twinsOf, withDesired } from '#lib/mqtt/twin.ts';

const dev = (): Device => ({
  apiVersion: 'devices.kubeedge.io/v1beta1',
  kind: 'Device',
  metadata: { name: 'thermo', namespace: 'default' },
  spec: {
    protocol: { protocolName: 'virtual' },
    properties: [{ name: 'target', desired: { value: '22' } }, { name: 'temp' }],
  },
  status: { twins: [{ propertyName: 'target', reported: { value: '20' } }] },
});

test('device ids: the name in default, namespace:name elsewhere, and back', () => {
  assert.is(deviceId('default', 'a'), 'a');
  assert.is(deviceId('lab', 'a'), 'lab:a');
  assert.equal(parseDeviceId('lab:a'), { namespace: 'lab', name: 'a' });
  assert.equal(parseDeviceId('a'), { namespace: 'default', name: 'a' });
  assert.is(hwUpdateId('$hw/events/device/lab:a/twin/update'), 'lab:a');
  assert.is(hwUpdateId('$hw/events/device/a/twin/update/document'), undefined);
});

test('command topics', () => {
  const t = new OutpostTopics('outpost/', 'edge-1');
  assert.equal(t.command('outpost/edge-1/devices/a/target/set'), {
    kind: 'set',
    id: 'a',
    property: 'target',
  });
  assert.equal(t.command('outpost/edge-1/pods/ns/web/restart'), {
    kind: 'restart',
    namespace: 'ns',
    name: 'web',
  });
  assert.is(t.command('outpost/edge-2/pods/ns/web/restart'), undefined);
  assert.is(t.command('outpost/edge-1/pods/ns/web/state'), undefined);
});

test('twin/update: expected values are desired writes; actual-only messages ask for nothing', () => {
  assert.equal(
    parseTwinUpdate('{"event_id":"e","twin":{"a":{"expected":{"value":"1"}},"b":{"actual":{"value":"2"}}}}'),
    {
      eventId: 'e',
      desired: { a: '1' },
    },
  );
  assert.equal(parseTwinUpdate('{"twin":{"a":{"expected":{"value":3}}}}').desired, { a: '3' });
  assert.throws(() => parseTwinUpdate('nope'), /not JSON/);
  assert.throws(() => parseTwinUpdate('{"twin":[]}'), /expected/);
  assert.throws(() => parseTwinUpdate('{"twin":{"a":{"expected":{"value":{}}}}}'), /must be a string/);
});

test('twins, delta and desired edits', () => {
  const twins = twinsOf(dev(), undefined, 5);
  assert.equal(twins.target, {
    expected: { value: '22', metadata: { timestamp: 5 } },
    actual: { value: '20', metadata: { timestamp: 5 } },
    optional: false,
    metadata: { type: 'string' },
  });
  assert.equal(twinDelta({ event_id: '', timestamp: 5 }, twins)?.delta, { target: '22' });
  const d = withDesired(dev(), { target: '23' });
  assert.is(d.spec.properties?.[0]?.desired?.value, '23');
  try {
    withDesired(dev(), { nope: '1' });
    assert.unreachable();
  } catch (e) {
    assert.is((e as { code: number }).code, 422);
  }
});

test('components by type and access mode', () => {
  assert.is(componentOf({ name: 'a', type: 'FLOAT', accessMode: 'ReadOnly' }, undefined), 'sensor');
  assert.is(componentOf({ name: 'a', type: 'FLOAT', accessMode: 'ReadWrite' }, undefined), 'number');
  assert.is(componentOf({ name: 'a', type: 'BOOLEAN', accessMode: 'ReadWrite' }, undefined), 'switch');
  assert.is(componentOf({ name: 'a', type: 'BOOLEAN', accessMode: 'ReadOnly' }, undefined), 'binary_sensor');
  assert.is(componentOf({ name: 'a', type: 'STRING', accessMode: 'ReadWrite' }, ['x', 'y']), 'select');
  assert.is(componentOf({ name: 'a', type: 'STRING', accessMode: 'ReadWrite' }, undefined), 'text');
  assert.is(componentOf(undefined, undefined), 'sensor');
});

test('pod state: Ready condition and summed restarts', () => {
  assert.equal(
    podState({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers: [] },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: [{ restartCount: 2 }, { restartCount: 1 }],
      },
    } as never),
    { ready: 'ON', restarts: 3, phase: 'Running' },
  );
});

test.run();
