import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import type { Device } from '#lib/kube/devices.ts';
import { createStore } from '#lib/store/index.ts';

const manifest = (target: string, extra: Partial<Device['metadata']> = {}): Device => ({
  apiVersion: 'devices.kubeedge.io/v1beta1',
  kind: 'Device',
  metadata: { name: 'thermo', ...extra },
  spec: {
    deviceModelRef: { name: 'm' },
    protocol: { protocolName: 'virtual' },
    properties: [
      { name: 'target', desired: { value: target } },
      { name: 'switch', desired: { value: 'true' } },
    ],
  },
});

function setup() {
  const store = createStore(openMetabase(':memory:'), {
    host: 'edge-1',
    now: () => Date.parse('2026-01-01T00:00:00Z'),
  });
  const events: string[] = [];
  store.hub.subscribe('devices', store.rv.current, (e) => events.push(e.type));
  return { store, events };
}

test('a manifest device is stored typed and defaulted, with generation 1 and no bookkeeping served', () => {
  const { store, events } = setup();
  assert.is(store.devices.apply(manifest('22'), 'manifest', 'a.yaml'), 'ADDED');
  const d = store.devices.get('default', 'thermo')!;
  assert.is(d.metadata.generation, 1);
  assert.is(d.metadata.namespace, 'default');
  assert.ok(d.metadata.uid);
  assert.not.ok('_outpost' in d);
  assert.is(store.devices.apply(manifest('22'), 'manifest', 'a.yaml'), 'UNCHANGED');
  assert.equal(events, ['ADDED']);
});

test('an edit survives manifest syncs until the manifest itself changes that field', () => {
  const { store } = setup();
  store.devices.apply(manifest('22'), 'manifest', 'a.yaml');
  const edited = store.devices.get('default', 'thermo')!;
  edited.spec.properties![0]!.desired!.value = '25';
  edited.metadata.labels = { room: 'lab' };
  const stored = store.devices.replace(edited)!;
  assert.is(stored.metadata.generation, 2);
  assert.is(store.devices.apply(manifest('22'), 'manifest', 'a.yaml'), 'UNCHANGED');
  assert.is(store.devices.get('default', 'thermo')!.spec.properties![0]!.desired!.value, '25');
  // The manifest adds an annotation: merged in, the edit stays.
  assert.is(
    store.devices.apply(manifest('22', { annotations: { a: 'b' } }), 'manifest', 'a.yaml'),
    'MODIFIED',
  );
  let d = store.devices.get('default', 'thermo')!;
  assert.is(d.spec.properties![0]!.desired!.value, '25');
  assert.equal(d.metadata.labels, { room: 'lab' });
  assert.equal(d.metadata.annotations, { a: 'b' });
  // The manifest changes the properties: the manifest wins there.
  store.devices.apply(manifest('19', { annotations: { a: 'b' } }), 'manifest', 'a.yaml');
  d = store.devices.get('default', 'thermo')!;
  assert.is(d.spec.properties![0]!.desired!.value, '19');
  assert.is(d.metadata.generation, 3);
});

test('reports merge twins by property, keep the spec, and write nothing when nothing changed', () => {
  const { store, events } = setup();
  store.devices.apply(manifest('22'), 'manifest', 'a.yaml');
  const twins = [{ propertyName: 'target', reported: { value: '21' }, observedDesired: { value: '22' } }];
  store.devices.reportTwins('default', 'thermo', twins);
  const rv = store.devices.get('default', 'thermo')!.metadata.resourceVersion;
  store.devices.reportTwins('default', 'thermo', twins);
  assert.is(store.devices.get('default', 'thermo')!.metadata.resourceVersion, rv);
  store.devices.reportTwins('default', 'thermo', [{ propertyName: 'switch', reported: { value: 'true' } }]);
  store.devices.reportState('default', 'thermo', 'ok');
  const d = store.devices.get('default', 'thermo')!;
  assert.equal(
    d.status?.twins?.map((t) => [t.propertyName, t.reported?.value]),
    [
      ['target', '21'],
      ['switch', 'true'],
    ],
  );
  assert.is(d.status?.state, 'ok');
  assert.is(d.status?.lastOnlineTime, '2026-01-01T00:00:00Z');
  assert.is(d.metadata.generation, 1);
  assert.equal(events, ['ADDED', 'MODIFIED', 'MODIFIED', 'MODIFIED']);
  assert.is(store.devices.reportTwins('default', 'nope', twins), undefined);
});

test('bookkeeping changes write no new resourceVersion', () => {
  const { store, events } = setup();
  store.devices.apply(manifest('22'), 'manifest', 'a.yaml');
  const rv = store.devices.get('default', 'thermo')!.metadata.resourceVersion;
  store.devices.setBook('default', 'thermo', (b) => ({ ...b, pushedGeneration: 1 }));
  assert.is(store.devices.record('default', 'thermo')!.book.pushedGeneration, 1);
  assert.is(store.devices.get('default', 'thermo')!.metadata.resourceVersion, rv);
  assert.equal(events, ['ADDED']);
});

test.run();
