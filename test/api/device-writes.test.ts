// Device and device model writes through app.request: create, delete, model replace and patch,
// validated against the CRD schema with the API server's causes; owners kept (manifest, cloud).
// Applying through a real mapper and the real kubectl: test/e2e/devices.test.ts.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Device } from '#lib/kube/devices.ts';
import { jsonCaller, testApp } from '../helpers/app.ts';

const t = suite('device writes');
const base = '/apis/devices.kubeedge.io/v1beta1/namespaces/default';

const model = (name: string, type = 'FLOAT') => ({
  apiVersion: 'devices.kubeedge.io/v1beta1',
  kind: 'DeviceModel',
  metadata: { name },
  spec: {
    protocol: 'virtual',
    properties: [{ name: 'target', type, accessMode: 'ReadWrite', maximum: '35' }],
  },
});
const device = (name: string, desired = '20') => ({
  apiVersion: 'devices.kubeedge.io/v1beta1',
  kind: 'Device',
  metadata: { name },
  spec: {
    deviceModelRef: { name: 'm' },
    protocol: { protocolName: 'virtual' },
    properties: [{ name: 'target', desired: { value: desired }, reportCycle: 1000000000 }],
  },
});

function setup() {
  const { app, store } = testApp();
  return { store, call: jsonCaller(app) };
}

t(
  'POST creates a model and a device (source api, generation 1); a taken name is 409 AlreadyExists',
  async () => {
    const { call, store } = setup();
    assert.is((await call('POST', `${base}/devicemodels`, model('m'))).code, 201);
    const created = await call('POST', `${base}/devices`, device('d'));
    assert.is(created.code, 201, JSON.stringify(created.body));
    assert.is(created.body.metadata.generation, 1);
    assert.ok(created.body.metadata.uid);
    assert.is(store.devices.record('default', 'd')?.source, 'api');
    const again = await call('POST', `${base}/devices`, device('d'));
    assert.is(again.code, 409);
    assert.is(again.body.reason, 'AlreadyExists');
  },
);

t('schema violations are 422 Invalid with the API server’s causes', async () => {
  const { call } = setup();
  const bad = await call('POST', `${base}/devicemodels`, model('m', 'float'));
  assert.is(bad.code, 422);
  assert.is(bad.body.reason, 'Invalid');
  assert.is(bad.body.details.kind, 'DeviceModel');
  assert.is(bad.body.details.group, 'devices.kubeedge.io');
  assert.equal(bad.body.details.causes[0], {
    field: 'spec.properties[0].type',
    reason: 'FieldValueNotSupported',
    message:
      'Unsupported value: "float": supported values: "INT", "FLOAT", "DOUBLE", "STRING", "BOOLEAN", "BYTES", "STREAM"',
  });
  assert.match(
    bad.body.message,
    /^DeviceModel.devices.kubeedge.io "m" is invalid: spec.properties\[0\].type: /,
  );
  await call('POST', `${base}/devicemodels`, model('m'));
  const d = device('d') as ReturnType<typeof device> & { spec: Record<string, unknown> };
  (d.spec.properties as Record<string, unknown>[])[0]!.reportCycle = '1s';
  const typed = await call('POST', `${base}/devices`, d);
  assert.is(typed.code, 422);
  assert.equal(
    typed.body.details.causes.map((c: { field: string; reason: string }) => `${c.field} ${c.reason}`),
    ['spec.properties[0].reportCycle FieldValueTypeInvalid'],
  );
  // The node's own check: a desired value outside the model's range, and a missing model.
  const range = await call('POST', `${base}/devices`, device('d', '50'));
  assert.is(range.code, 422);
  assert.is(range.body.details.causes[0].field, 'spec.properties[0].desired.value');
  const orphan = device('o');
  orphan.spec.deviceModelRef.name = 'nope';
  assert.is(
    (await call('POST', `${base}/devices`, orphan)).body.details.causes[0].reason,
    'FieldValueNotFound',
  );
});

t('models are replaced and patched with a new generation; a stale resourceVersion is 409', async () => {
  const { call } = setup();
  await call('POST', `${base}/devicemodels`, model('m'));
  const patched = await call(
    'PATCH',
    `${base}/devicemodels/m`,
    [{ op: 'replace', path: '/spec/properties/0/maximum', value: '40' }],
    { 'content-type': 'application/json-patch+json' },
  );
  assert.is(patched.code, 200, JSON.stringify(patched.body));
  assert.is(patched.body.metadata.generation, 2);
  const invalid = await call(
    'PATCH',
    `${base}/devicemodels/m`,
    { spec: { properties: [{ name: 'x', accessMode: 'Sometimes' }] } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.is(invalid.code, 422);
  const replaced = await call('PUT', `${base}/devicemodels/m`, {
    ...model('m'),
    metadata: { name: 'm', resourceVersion: '1' },
  });
  assert.is(replaced.code, 409);
});

t('DELETE removes an API object (answering it); manifest objects are 409, cloud ones 403', async () => {
  const { call, store } = setup();
  await call('POST', `${base}/devicemodels`, model('m'));
  await call('POST', `${base}/devices`, device('d'));
  const dry = await call('DELETE', `${base}/devices/d?dryRun=All`);
  assert.is(dry.code, 200);
  assert.ok(store.devices.get('default', 'd'));
  const gone = await call('DELETE', `${base}/devices/d`);
  assert.is(gone.code, 200);
  assert.is(gone.body.metadata.name, 'd');
  assert.is(store.devices.get('default', 'd'), undefined);
  assert.is((await call('DELETE', `${base}/devices/d`)).code, 404);
  store.devices.apply(device('file') as unknown as Device, 'manifest', '/etc/outpost/manifests/d.yaml');
  const manifest = await call('DELETE', `${base}/devices/file`);
  assert.is(manifest.code, 409);
  assert.match(manifest.body.message, 'd.yaml');
  store.devices.apply(device('remote') as unknown as Device, 'cloud', null);
  assert.is((await call('DELETE', `${base}/devices/remote`)).code, 403);
  const edit = await call(
    'PATCH',
    `${base}/devices/remote`,
    { metadata: { labels: { a: 'b' } } },
    {
      'content-type': 'application/merge-patch+json',
    },
  );
  assert.is(edit.code, 403);
  assert.match(edit.body.message, 'managed by the cloud');
  assert.is((await call('DELETE', `${base}/devicemodels/m`)).code, 200);
});

t.run();
