import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import { silentLogger } from '#lib/log.ts';
import { ManifestSync } from '#lib/manifests/sync.ts';
import { createStore } from '#lib/store/index.ts';
import { device, MODEL } from '../helpers/devices.ts';

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-manifests-dev-'));
  const store = createStore(openMetabase(':memory:'), { host: 'edge-1' });
  const sync = new ManifestSync({ dir, nodeName: 'edge-1', store, log: silentLogger });
  return { dir, store, sync, done: () => rmSync(dir, { recursive: true, force: true }) };
}

test('Device and DeviceModel manifests are stored beside pods and removed with their file', async () => {
  const { dir, store, sync, done } = setup();
  writeFileSync(join(dir, 'devices.yaml'), [MODEL, device('thermo', 'virtual')].join('---\n'));
  const report = await sync.sync();
  assert.equal(report.problems, []);
  assert.is(report.applied, 2);
  assert.is(store.devices.get('default', 'thermo')?.spec.protocol.protocolName, 'virtual');
  assert.is(store.deviceModels.get('default', 'thermometer-model')?.spec.protocol, 'virtual');
  writeFileSync(join(dir, 'devices.yaml'), MODEL);
  assert.is((await sync.sync()).removed, 1);
  assert.is(store.devices.get('default', 'thermo'), undefined);
  done();
});

test('an invalid device is reported and keeps what its file defined before', async () => {
  const { dir, store, sync, done } = setup();
  writeFileSync(join(dir, 'devices.yaml'), [MODEL, device('thermo', 'virtual')].join('---\n'));
  await sync.sync();
  writeFileSync(
    join(dir, 'devices.yaml'),
    [MODEL, device('thermo', 'virtual').replace('protocolName: virtual', 'protocolName: ""')].join('---\n'),
  );
  const report = await sync.sync();
  assert.equal(
    report.problems.map((p) => p.message),
    ['Device "thermo" is invalid: spec.protocol.protocolName: Required value'],
  );
  assert.is(report.removed, 0);
  assert.is(store.devices.get('default', 'thermo')?.spec.protocol.protocolName, 'virtual');
  writeFileSync(
    join(dir, 'old.yaml'),
    'apiVersion: devices.kubeedge.io/v1alpha2\nkind: Device\nmetadata: {name: x}\nspec: {}\n',
  );
  assert.match(
    (await sync.sync()).problems.at(-1)!.message,
    'apiVersion must be devices.kubeedge.io/v1beta1',
  );
  done();
});

test.run();
