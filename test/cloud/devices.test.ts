// Cloud devices into the metabase (the reflector stores of lib/cloud/devices.ts), their status back
// through the outbox, and the one probe that tells a cluster without the CRDs or the permission.
// The real API server is exercised by test/e2e/cloud-devices.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import type { ApiResponse } from '#lib/cloud/api.ts';
import { CloudDevices, probeDevices } from '#lib/cloud/devices.ts';
import { OutboxSender } from '#lib/cloud/outbox-sender.ts';
import type { Device, DeviceModel } from '#lib/kube/devices.ts';
import { silentLogger } from '#lib/log.ts';
import { createStore, type Store } from '#lib/store/index.ts';

const API = 'devices.kubeedge.io/v1beta1';
const device = (name: string, node: string, model = 'm', rv = '5'): Device => ({
  apiVersion: API,
  kind: 'Device',
  metadata: { name, namespace: 'default', resourceVersion: rv, uid: `cloud-${name}` },
  spec: { nodeName: node, deviceModelRef: { name: model }, protocol: { protocolName: 'virtual' } },
  status: { state: 'from-cloud' },
});
const model = (name: string): DeviceModel => ({
  apiVersion: API,
  kind: 'DeviceModel',
  metadata: { name, namespace: 'default', resourceVersion: '3' },
  spec: { protocol: 'virtual', properties: [{ name: 't', type: 'FLOAT', accessMode: 'ReadOnly' }] },
});

function setup(): { store: Store; sink: CloudDevices } {
  const store = createStore(openMetabase(':memory:'), { host: 'edge-1' });
  store.outbox.enabled = true;
  return { store, sink: new CloudDevices({ store, nodeName: 'edge-1', log: silentLogger }) };
}

const names = (store: Store) => ({
  devices: store.devices.records().map((r) => `${r.object.metadata.name}:${r.source}`),
  models: store.deviceModels.records().map((r) => `${r.object.metadata.name}:${r.source}`),
});

test('only the devices bound to this node are kept, and only the models they reference', () => {
  const { store, sink } = setup();
  sink.devices.replace([device('a', 'edge-1'), device('b', 'edge-2'), device('c', 'edge-1', 'n')], '10');
  // Models not listed yet: none stored, none removed.
  assert.equal(names(store), { devices: ['a:cloud', 'c:cloud'], models: [] });
  sink.models.replace([model('m'), model('other')], '11');
  assert.equal(names(store).models, ['m:cloud']);
  sink.models.apply('ADDED', model('n'), '12');
  assert.equal(names(store).models, ['m:cloud', 'n:cloud']);
  // The cloud's status is not the node's: the node reports its own.
  assert.is(store.devices.get('default', 'a')!.status, undefined);
  // A device moved to another node, and a deleted one, leave; their models with them.
  sink.devices.apply('MODIFIED', device('c', 'edge-2', 'n'), '13');
  sink.devices.apply('DELETED', device('a', 'edge-1'), '14');
  assert.equal(names(store), { devices: [], models: [] });
  assert.is(sink.devices.resourceVersion(), '14');
});

test('a relist removes what the cloud no longer has; local objects of the same name are kept', () => {
  const { store, sink } = setup();
  store.devices.create(device('local', 'edge-1'), 'api');
  sink.models.replace([model('m')], '1');
  sink.devices.replace([device('a', 'edge-1'), device('local', 'edge-1')], '2');
  assert.equal(names(store), { devices: ['a:cloud', 'local:api'], models: ['m:cloud'] });
  sink.devices.replace([], '3');
  assert.equal(names(store), { devices: ['local:api'], models: [] });
});

test('reported twins and state of a cloud device go to the outbox, coalesced; local devices do not', () => {
  const { store, sink } = setup();
  sink.devices.replace([device('a', 'edge-1')], '1');
  store.devices.create(device('local', 'edge-1'), 'api');
  store.devices.reportTwins('default', 'a', [{ propertyName: 't', reported: { value: '20' } }]);
  store.devices.reportTwins('default', 'a', [{ propertyName: 't', reported: { value: '21' } }]);
  store.devices.reportState('default', 'a', 'ok');
  store.devices.reportState('default', 'local', 'ok');
  const entries = store.outbox.peek(10);
  assert.is(entries.length, 1);
  assert.is(entries[0]!.kind, 'device-status');
  const payload = entries[0]!.payload as { name: string; status: Device['status'] };
  assert.is(payload.name, 'a');
  assert.is(payload.status?.twins?.[0]?.reported?.value, '21');
  assert.is(payload.status?.state, 'ok');
  // Deleted in the cloud: the pending status has nowhere to go.
  sink.devices.apply('DELETED', device('a', 'edge-1'), '2');
  assert.is(store.outbox.depth(), 0);
});

test('the status goes to the status subresource, or to the object when the CRD has none', async () => {
  const { store, sink } = setup();
  sink.devices.replace([device('a', 'edge-1')], '1');
  store.devices.reportState('default', 'a', 'ok');
  const calls: string[] = [];
  const sender = new OutboxSender({
    store,
    nodeName: 'edge-1',
    log: silentLogger,
    request: async (method, path, body, type): Promise<ApiResponse> => {
      calls.push(`${method} ${path} ${type} ${JSON.stringify(body)}`);
      return { status: path.endsWith('/status') ? 404 : 200, body: {} };
    },
  });
  assert.is(await sender.drain(), 1);
  const base = '/apis/devices.kubeedge.io/v1beta1/namespaces/default/devices/a';
  assert.equal(
    calls.map((c) => c.split(' ').slice(0, 3).join(' ')),
    [`PATCH ${base}/status application/merge-patch+json`, `PATCH ${base} application/merge-patch+json`],
  );
  assert.match(calls[0]!, '"state":"ok"');
});

test('the probe tells absent CRDs, a forbidden node and whether the server filters by node', async () => {
  const discovery = {
    resources: [{ name: 'devices' }, { name: 'devices/status' }, { name: 'devicemodels' }],
  };
  const answer = (group: number, list: number) => async (p: string) =>
    p.includes('?') ? { status: list, body: {} } : { status: group, body: group === 200 ? discovery : {} };
  assert.is(await probeDevices(answer(404, 403), 'edge-1'), 'absent');
  assert.is(await probeDevices(async () => ({ status: 200, body: { resources: [] } }), 'edge-1'), 'absent');
  assert.is(await probeDevices(answer(200, 403), 'edge-1'), 'forbidden');
  assert.equal(await probeDevices(answer(200, 400), 'edge-1'), { fieldSelector: false });
  assert.equal(await probeDevices(answer(200, 200), 'edge-1'), { fieldSelector: true });
  const asked: string[] = [];
  await probeDevices(async (p) => {
    asked.push(p);
    return { status: 200, body: discovery };
  }, 'edge-1');
  assert.equal(asked, [
    '/apis/devices.kubeedge.io/v1beta1',
    '/apis/devices.kubeedge.io/v1beta1/devices?limit=1&fieldSelector=spec.nodeName%3Dedge-1',
  ]);
});

test.run();
