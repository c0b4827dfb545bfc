// Devices end to end over real unix sockets: Outpost's DMI server, the reference virtual mapper, the
// API, the real kubectl and the outpost CLI. No containerd needed. Waits poll for an outcome; nothing
// asserts on how long it took.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parse, stringify } from 'yaml';
import { ManagerClient } from '#lib/dmi/manager-client.ts';
import type { VirtualMapper } from '#lib/dmi/virtual-mapper.ts';
import type { Table } from '#lib/kube/table.ts';
import { kubectl, outpost, run, startTestAgent, type TestAgent } from '../helpers/agent.ts';
import {
  api,
  DEVICES,
  desired,
  device,
  getDevice,
  MODEL,
  reported,
  type Status,
  startMapper,
  writeDevices,
} from '../helpers/devices.ts';
import { waitFor } from '../helpers/lab.ts';

const root = mkdtempSync(join(tmpdir(), 'outpost-dev-'));
const manifests = join(root, 'manifests');
const dataDir = join(root, 'data');
const dmiSocket = join(dataDir, 'dmi.sock');
const mapperSocket = join(root, 'virtual.sock');
let agent: TestAgent;
let vm: VirtualMapper;
let vmB: VirtualMapper | undefined;

const t = suite('devices');

t.before(async () => {
  mkdirSync(manifests, { recursive: true });
  writeDevices(manifests, [
    device('thermometer', 'virtual'),
    device('heater', 'virtual-b', 'room: hall'),
    device('plug', 'modbus', 'room: hall'),
  ]);
  agent = await startTestAgent({ manifests, dataDir });
});

t.after(async () => {
  await vm?.stop();
  await vmB?.stop();
  await agent?.stop();
  rmSync(root, { recursive: true, force: true });
});

const grpcCode = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return (e as ServiceError).code;
  }
  return GrpcStatus.OK;
};

const editorScript = (name: string, body: string) => {
  const file = join(root, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
};

t(
  'MapperRegister: an empty protocol is InvalidArgument; with data it answers the protocol’s devices and models',
  async () => {
    const dmi = new ManagerClient(dmiSocket);
    try {
      // The DMI module starts beside the API; wait for its socket to answer.
      await waitFor(async () => (await grpcCode(dmi.reportState('default', 'plug', 'ok'))) === GrpcStatus.OK);
      const noProtocol = await grpcCode(
        dmi.register({ name: 'x', protocol: '', address: '/tmp/x.sock' }, true),
      );
      assert.is(noProtocol, GrpcStatus.INVALID_ARGUMENT);
      const res = await dmi.register(
        { name: 'modbus-mapper', protocol: 'modbus', address: join(root, 'gone.sock') },
        true,
      );
      assert.equal(
        res.deviceList.map((d) => d.name),
        ['plug'],
      );
      assert.is(
        res.deviceList[0]!.spec?.protocol?.configData?.data.ambient?.type_url,
        'type.googleapis.com/google.protobuf.FloatValue',
      );
      assert.equal(
        res.modelList.map((m) => m.spec?.properties.map((p) => `${p.name}:${p.type}:${p.accessMode}`)),
        [['temperature:FLOAT:ReadOnly', 'target-temperature:FLOAT:ReadWrite', 'switch:BOOLEAN:ReadWrite']],
      );
      const unknown = await grpcCode(
        dmi.reportStatus('default', 'ghost', [
          { propertyName: 'a', reported: { value: '1', metadata: {} }, observedDesired: null },
        ]),
      );
      assert.is(unknown, GrpcStatus.NOT_FOUND);
      assert.is(await grpcCode(dmi.reportState('default', 'plug', '')), GrpcStatus.INVALID_ARGUMENT);
    } finally {
      dmi.close();
    }
  },
);

t('the virtual mapper registers with data and its reports reach the metabase', async () => {
  vm = await startMapper(mapperSocket, dmiSocket);
  assert.equal([...vm.devices.keys()], ['default/thermometer'], 'the mapper got only its protocol’s device');
  const d = await waitFor(async () => {
    const x = await getDevice(agent.url, 'thermometer');
    return x.status?.state === 'ok' && reported(x, 'target-temperature') === '22' ? x : undefined;
  });
  assert.ok(d, 'thermometer reported');
  assert.is(d!.status?.twins?.find((tw) => tw.propertyName === 'switch')?.observedDesired?.value, 'true');
  assert.ok(d!.status?.lastOnlineTime);
});

t('registration without data: the devices of the protocol are pushed with RegisterDevice', async () => {
  const dmi = new ManagerClient(dmiSocket);
  const sock = join(root, 'virtual-b.sock');
  try {
    const res = await dmi.register({ name: 'mapper-b', protocol: 'virtual-b', address: sock }, false);
    assert.equal(res, { modelList: [], deviceList: [] });
  } finally {
    dmi.close();
  }
  vmB = await startMapper(sock, dmiSocket, { protocol: 'virtual-b', name: 'mapper-b', withData: false });
  assert.ok(await waitFor(() => vmB!.devices.has('default/heater')), 'heater registered with mapper-b');
  const heater = await waitFor(async () => {
    const x = await getDevice(agent.url, 'heater');
    return reported(x, 'switch') === 'true' ? x : undefined;
  });
  assert.ok(heater);
});

t('kubectl get devices: Table with protocol, model, state and mapper; selectors; devicemodels', async () => {
  const r = await kubectl(agent.url, ['get', 'devices']);
  assert.is(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.match(lines[0]!, /^NAME\s+PROTOCOL\s+MODEL\s+STATE\s+MAPPER\s+AGE$/);
  assert.match(r.stdout, /thermometer\s+virtual\s+thermometer-model\s+ok\s+virtual-mapper\s+\S+/);
  assert.match(r.stdout, /heater\s+virtual-b\s+thermometer-model\s+ok\s+mapper-b\s+/);
  assert.match(r.stdout, /plug\s+modbus\s+thermometer-model\s+ok\s+modbus-mapper\s+/);
  const wide = await kubectl(agent.url, ['get', 'dev', 'thermometer', '-o', 'wide']);
  assert.match(wide.stdout, /REPORTED\s+DESIRED/);
  assert.match(wide.stdout, /target-temperature=22,switch=true\s*$/m);
  const byLabel = await kubectl(agent.url, ['get', 'devices', '-l', 'room=hall', '-o', 'name']);
  assert.is(byLabel.stdout, 'device.devices.kubeedge.io/heater\ndevice.devices.kubeedge.io/plug\n');
  const yaml = await kubectl(agent.url, ['get', 'device', 'thermometer', '-o', 'yaml']);
  const obj = parse(yaml.stdout);
  assert.is(obj.apiVersion, 'devices.kubeedge.io/v1beta1');
  assert.is(obj.kind, 'Device');
  assert.is(obj.status.state, 'ok');
  assert.not.ok('_outpost' in obj);
  const models = await kubectl(agent.url, ['get', 'devicemodels']);
  assert.match(
    models.stdout,
    /thermometer-model\s+virtual\s+temperature:FLOAT,target-temperature:FLOAT,switch:BOOLEAN/,
  );
  const missing = await kubectl(agent.url, ['get', 'device', 'nope']);
  assert.is(missing.code, 1);
  assert.is(
    missing.stderr.trim(),
    'Error from server (NotFound): devices.devices.kubeedge.io "nope" not found',
  );
});

t('outpost get device prints what kubectl prints', async () => {
  const r = await outpost(['get', 'device', '-s', agent.url]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /^NAME\s+PROTOCOL\s+MODEL\s+STATE\s+MAPPER\s+AGE\n/);
  assert.match(r.stdout, /thermometer\s+virtual\s+thermometer-model\s+ok\s+virtual-mapper/);
});

t('an edit through the API goes to the mapper first, is stored, and comes back as reported', async () => {
  const before = await getDevice(agent.url, 'thermometer');
  const patch = {
    spec: {
      properties: before.spec.properties!.map((p) =>
        p.name === 'target-temperature' ? { ...p, desired: { value: '25' } } : p,
      ),
    },
  };
  const r = await api(agent.url, 'PATCH', `${DEVICES}/thermometer`, patch, 'application/merge-patch+json');
  assert.is(r.status, 200, JSON.stringify(r.body));
  // UpdateDevice completed before the API answered.
  assert.is(vm.devices.get('default/thermometer')!.values.get('target-temperature'), '25');
  const after = await getDevice(agent.url, 'thermometer');
  assert.is(desired(after, 'target-temperature'), '25');
  assert.is(after.metadata.generation, (before.metadata.generation ?? 1) + 1);
  assert.ok(
    await waitFor(
      async () => reported(await getDevice(agent.url, 'thermometer'), 'target-temperature') === '25',
    ),
  );
  const events = await api<{ items: { reason: string; message: string }[] }>(
    agent.url,
    'GET',
    '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=thermometer',
  );
  assert.ok(events.body.items.some((e) => e.reason === 'Updated' && e.message.includes('"22" → "25"')));
});

t('PUT of the whole device in YAML (keadm ctl edit) is applied through the mapper', async () => {
  // The PUT carries the resourceVersion it read; a report from the mapper in between bumps it and
  // the PUT answers 409, so read again and retry as a client's RetryOnConflict does.
  const put = async () => {
    const device = await getDevice(agent.url, 'thermometer');
    device.spec.properties![0]!.reportCycle = 300_000_000;
    const res = await api<{ metadata: { generation: number } }>(
      agent.url,
      'PUT',
      `/devices/default/thermometer`,
      stringify(device),
      'application/yaml',
    );
    return { d: device, r: res };
  };
  let { d, r } = await put();
  for (let i = 0; i < 10 && r.status === 409; i++) ({ d, r } = await put());
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.is(r.body.metadata.generation, (d.metadata.generation ?? 1) + 1);
  assert.is(vm.devices.get('default/thermometer')!.device.spec.properties![0]!.reportCycle, 300_000_000);
});

t('kubectl patch and kubectl edit reach the mapper and come back as reported', async () => {
  const d = await getDevice(agent.url, 'thermometer');
  const props = d.spec.properties!.map((p) =>
    p.name === 'switch' ? { ...p, desired: { value: 'false' } } : p,
  );
  const patched = await kubectl(agent.url, [
    'patch',
    'device',
    'thermometer',
    '--type',
    'merge',
    '-p',
    JSON.stringify({ spec: { properties: props } }),
  ]);
  assert.is(patched.code, 0, patched.stderr);
  assert.is(patched.stdout.trim(), 'device.devices.kubeedge.io/thermometer patched');
  assert.is(vm.devices.get('default/thermometer')!.values.get('switch'), 'false');

  const editor = editorScript('edit-28.sh', `sed -i 's/value: "25"/value: "28"/' "$1"`);
  const edited = await kubectl(agent.url, ['edit', 'device', 'thermometer'], {
    env: { ...process.env, KUBE_EDITOR: editor },
  });
  assert.is(edited.code, 0, edited.stderr);
  assert.is(edited.stdout.trim(), 'device.devices.kubeedge.io/thermometer edited');
  assert.is(vm.devices.get('default/thermometer')!.values.get('target-temperature'), '28');
  assert.ok(
    await waitFor(async () => {
      const x = await getDevice(agent.url, 'thermometer');
      return reported(x, 'target-temperature') === '28' && reported(x, 'switch') === 'false';
    }),
  );
});

t('kubectl 1.27 (OpenAPI v2) and 1.33 (OpenAPI v3) edit devices too', async () => {
  const bin = (v: string) => `/usr/lib/google-cloud-sdk/bin/kubectl.${v}`;
  for (const [v, value] of [
    ['1.27', '26'],
    ['1.33', '28'],
  ] as const) {
    if (!existsSync(bin(v))) {
      process.stderr.write(`skipping kubectl ${v}: not installed\n`);
      continue;
    }
    const home = mkdtempSync(join(root, 'home-'));
    const editor = editorScript(`edit-${v}.sh`, `sed -i 's/value: "2[0-9]"$/value: "${value}"/' "$1"`);
    // As the admin: the admin kubeconfig, over https.
    const r = await run(bin(v), ['--kubeconfig', agent.kubeconfig, 'edit', 'device', 'thermometer'], {
      env: { ...process.env, HOME: home, KUBECONFIG: join(home, 'none'), KUBE_EDITOR: editor },
    });
    assert.is(r.code, 0, `${v}: ${r.stderr}`);
    assert.is(vm.devices.get('default/thermometer')!.values.get('target-temperature'), value, v);
  }
  // The tests below start from 28, whichever kubectl ran.
  const d = await getDevice(agent.url, 'thermometer');
  const props = d.spec.properties!.map((p) =>
    p.name === 'target-temperature' ? { ...p, desired: { value: '28' } } : p,
  );
  const r = await api(
    agent.url,
    'PATCH',
    `${DEVICES}/thermometer`,
    { spec: { properties: props } },
    'application/merge-patch+json',
  );
  assert.is(r.status, 200);
});

t(
  'kubectl edit with an invalid value: the Status causes come back in the editor, nothing changes',
  async () => {
    const editor = editorScript('edit-hot.sh', `sed -i 's/value: "28"/value: "hot"/' "$1"`);
    const r = await kubectl(agent.url, ['edit', 'device', 'thermometer'], {
      env: { ...process.env, KUBE_EDITOR: editor },
    });
    assert.is(r.code, 1);
    assert.match(r.stderr, /devices.devices.kubeedge.io "thermometer" is invalid/);
    assert.is(desired(await getDevice(agent.url, 'thermometer'), 'target-temperature'), '28');
    assert.is(vm.devices.get('default/thermometer')!.values.get('target-temperature'), '28');
  },
);

t(
  'outpost edit: $EDITOR on YAML, applied through the mapper; bad YAML reopens the editor; no change, no call',
  async () => {
    const editor = editorScript('edit-21.sh', `sed -i 's/value: "28"/value: "21"/' "$1"`);
    const ok = await outpost(['edit', 'device', 'thermometer', '-s', agent.url], {
      env: { ...process.env, OUTPOST_EDITOR: editor },
    });
    assert.is(ok.code, 0, ok.stderr);
    assert.is(ok.stdout, 'device.devices.kubeedge.io/thermometer edited\n');
    assert.is(vm.devices.get('default/thermometer')!.values.get('target-temperature'), '21');

    const rv = (await getDevice(agent.url, 'thermometer')).metadata.generation;
    // Breaks the YAML the first time; the second time it sees its own error comment and saves as is.
    const broken = editorScript(
      'edit-broken.sh',
      `if grep -q 'syntax error' "$1"; then exit 0; fi\nsed -i 's/value: "21"/value: [unclosed/' "$1"`,
    );
    const bad = await outpost(['edit', 'device', 'thermometer', '-s', agent.url], {
      env: { ...process.env, OUTPOST_EDITOR: broken },
    });
    assert.is(bad.code, 1);
    assert.is(bad.stderr, 'error: Edit cancelled, no valid changes were saved.\n');
    assert.is((await getDevice(agent.url, 'thermometer')).metadata.generation, rv);

    const none = await outpost(['edit', 'device', 'thermometer', '-s', agent.url], {
      env: { ...process.env, OUTPOST_EDITOR: 'true' },
    });
    assert.is(none.code, 0);
    assert.is(none.stdout, 'Edit cancelled, no changes made.\n');
  },
);

t('bad input answers the right Status', async () => {
  const d = await getDevice(agent.url, 'thermometer');
  const set = (name: string, value: string) =>
    d.spec.properties!.map((p) => (p.name === name ? { ...p, desired: { value } } : p));
  const merge = (body: unknown, name = 'thermometer') =>
    api<Status>(agent.url, 'PATCH', `${DEVICES}/${name}`, body, 'application/merge-patch+json');

  const unknown = await merge({ metadata: { labels: { a: 'b' } } }, 'nope');
  assert.is(unknown.status, 404);
  assert.is(unknown.body.message, 'devices.devices.kubeedge.io "nope" not found');

  const invalid = await merge({ spec: { properties: set('target-temperature', 'hot') } });
  assert.is(invalid.status, 422);
  assert.is(invalid.body.reason, 'Invalid');
  assert.equal(invalid.body.details?.causes, [
    {
      field: 'spec.properties[1].desired.value',
      reason: 'FieldValueInvalid',
      message: 'Invalid value: "hot": must be a number (property type FLOAT)',
    },
  ]);
  const range = await merge({ spec: { properties: set('target-temperature', '99') } });
  assert.is(range.status, 422);
  assert.match(range.body.message, 'must be at most 35');
  const readOnly = await merge({ spec: { properties: set('temperature', '30') } });
  assert.is(readOnly.status, 422);
  assert.match(readOnly.body.message, 'property "temperature" is ReadOnly');
  const protocol = await merge({ spec: { protocol: { protocolName: 'modbus' } } });
  assert.is(protocol.status, 422);

  const stale = { ...d, metadata: { ...d.metadata, resourceVersion: '1' } };
  const conflict = await api<Status>(agent.url, 'PUT', `${DEVICES}/thermometer`, stale);
  assert.is(conflict.status, 409);
  assert.is(conflict.body.reason, 'Conflict');

  const yaml = await api<Status>(
    agent.url,
    'PUT',
    `${DEVICES}/thermometer`,
    'spec: [unclosed',
    'application/yaml',
  );
  assert.is(yaml.status, 400);
  assert.is(yaml.body.reason, 'BadRequest');
  const json = await api<Status>(
    agent.url,
    'PATCH',
    `${DEVICES}/thermometer`,
    '{"spec":',
    'application/merge-patch+json',
  );
  assert.is(json.status, 400);
  const jsonPatch = await api<Status>(
    agent.url,
    'PATCH',
    `${DEVICES}/thermometer`,
    '[{"op":"test","path":"/spec/nodeName","value":"not-this-node"}]',
    'application/json-patch+json',
  );
  // JSON patch is served on devices as on pods; a failed `test` op is the client's mistake.
  assert.is(jsonPatch.status, 422);

  const k = await kubectl(agent.url, [
    'patch',
    'device',
    'thermometer',
    '--type',
    'merge',
    '-p',
    JSON.stringify({ spec: { properties: set('switch', 'maybe') } }),
  ]);
  assert.is(k.code, 1);
  assert.match(
    k.stderr,
    /^The Device "thermometer" is invalid: spec.properties\[2\].desired.value: Invalid value: "maybe"/,
  );

  const after = await getDevice(agent.url, 'thermometer');
  assert.is(after.metadata.generation, d.metadata.generation, 'nothing was applied');
});

t(
  'a mapper that is down: 503 and nothing half-applied; back up, it registers again and edits go through',
  async () => {
    const d = await getDevice(agent.url, 'thermometer');
    await vm.stop();
    const body = {
      spec: {
        properties: d.spec.properties!.map((p) =>
          p.name === 'target-temperature' ? { ...p, desired: { value: '30' } } : p,
        ),
      },
    };
    const down = await api<Status>(
      agent.url,
      'PATCH',
      `${DEVICES}/thermometer`,
      body,
      'application/merge-patch+json',
    );
    assert.is(down.status, 503);
    assert.is(down.body.reason, 'ServiceUnavailable');
    assert.match(down.body.message, 'mapper "virtual-mapper"');
    const same = await getDevice(agent.url, 'thermometer');
    assert.equal(same.spec, d.spec);
    assert.is(same.metadata.generation, d.metadata.generation);
    const table = await api<Table>(agent.url, 'GET', `${DEVICES}/thermometer`).then(async () => {
      const res = await fetch(new URL(`${DEVICES}/thermometer`, agent.url), {
        headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
      });
      return (await res.json()) as Table;
    });
    assert.is(table.rows[0]!.cells[4], 'virtual-mapper (Unreachable)');
    // A device of a mapper that never answered: 503 too.
    const plug = await getDevice(agent.url, 'plug');
    const plugEdit = await api<Status>(
      agent.url,
      'PATCH',
      `${DEVICES}/plug`,
      {
        spec: {
          properties: plug.spec.properties!.map((p) =>
            p.name === 'switch' ? { ...p, desired: { value: 'false' } } : p,
          ),
        },
      },
      'application/merge-patch+json',
    );
    assert.is(plugEdit.status, 503);
    // Labels alone need no mapper.
    const labels = await api<Status>(
      agent.url,
      'PATCH',
      `${DEVICES}/plug`,
      { metadata: { labels: { tier: 'b' } } },
      'application/merge-patch+json',
    );
    assert.is(labels.status, 200);

    vm = await startMapper(mapperSocket, dmiSocket);
    // The registration answered with the stored spec: the mapper holds the last applied target.
    assert.is(
      vm.devices.get('default/thermometer')!.values.get('target-temperature'),
      desired(d, 'target-temperature'),
    );
    const up = await api(agent.url, 'PATCH', `${DEVICES}/thermometer`, body, 'application/merge-patch+json');
    assert.is(up.status, 200, JSON.stringify(up.body));
    assert.ok(
      await waitFor(
        async () => reported(await getDevice(agent.url, 'thermometer'), 'target-temperature') === '30',
      ),
    );
  },
);

t('Outpost restarted with mappers registered: reloaded, tested, reports and edits flow again', async () => {
  await agent.close();
  agent = await startTestAgent({ manifests, dataDir });
  const mapperCell = async () => {
    const res = await fetch(new URL(`${DEVICES}/thermometer`, agent.url), {
      headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    });
    return ((await res.json()) as Table).rows[0]!.cells[4];
  };
  assert.is(await waitFor(async () => (await mapperCell()) === 'virtual-mapper'), true);
  // The manifest did not change while Outpost was down: the edits made through the API stay.
  assert.is(desired(await getDevice(agent.url, 'thermometer'), 'target-temperature'), '30');
  const d = await getDevice(agent.url, 'thermometer');
  const body = {
    spec: {
      properties: d.spec.properties!.map((p) =>
        p.name === 'target-temperature' ? { ...p, desired: { value: '24' } } : p,
      ),
    },
  };
  const r = await api(agent.url, 'PATCH', `${DEVICES}/thermometer`, body, 'application/merge-patch+json');
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.ok(
    await waitFor(
      async () => reported(await getDevice(agent.url, 'thermometer'), 'target-temperature') === '24',
    ),
  );
});

t('a manifest change reaches the mapper through UpdateDevice', async () => {
  writeDevices(manifests, [
    device('thermometer', 'virtual', 'room: lab, floor: "2"'),
    device('heater', 'virtual-b', 'room: hall'),
    device('plug', 'modbus', 'room: hall'),
  ]);
  // Labels only: stored, the mapper's values untouched (the target edited through the API stays).
  assert.ok(
    await waitFor(async () => (await getDevice(agent.url, 'thermometer')).metadata.labels?.floor === '2'),
  );
  assert.is(vm.devices.get('default/thermometer')!.values.get('target-temperature'), '24');
  writeDevices(manifests, [
    device('thermometer', 'virtual', 'room: lab, floor: "2"').replace('value: "22"', 'value: "19"'),
    device('heater', 'virtual-b', 'room: hall'),
  ]);
  assert.ok(
    await waitFor(() => vm.devices.get('default/thermometer')?.values.get('target-temperature') === '19'),
  );
  assert.ok(await waitFor(async () => (await api(agent.url, 'GET', `${DEVICES}/plug`)).status === 404));
});

t('outpost describe device: spec, twins desired vs reported, mapper, state, events', async () => {
  const r = await outpost(['describe', 'device', 'thermometer', '-s', agent.url]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Name:\s+thermometer$/m);
  assert.match(r.stdout, /^Protocol:\s+virtual$/m);
  assert.match(r.stdout, /^Mapper:\s+virtual-mapper$/m);
  assert.match(r.stdout, /^State:\s+ok$/m);
  assert.match(r.stdout, /Property\s+Type\s+Access\s+Desired\s+Observed Desired\s+Reported/);
  assert.match(r.stdout, /target-temperature\s+FLOAT\s+ReadWrite\s+19\s+19\s+19/);
  assert.match(r.stdout, /Normal\s+Updated\s+.*outpost-dmi\s+desired target-temperature/);
  const missing = await outpost(['describe', 'device', 'nope', '-s', agent.url]);
  assert.is(missing.code, 1);
  assert.match(
    missing.stderr,
    /Error from server \(NotFound\): devices.devices.kubeedge.io "nope" not found/,
  );
});

t('watch: a change to a device is a MODIFIED event', async () => {
  const d = await getDevice(agent.url, 'thermometer');
  const ac = new AbortController();
  const res = await fetch(
    new URL(
      `${DEVICES}?watch=true&resourceVersion=${d.metadata.resourceVersion}&fieldSelector=metadata.name=thermometer`,
      agent.url,
    ),
    { signal: ac.signal },
  );
  const label = await api(
    agent.url,
    'PATCH',
    `${DEVICES}/thermometer`,
    { metadata: { labels: { watched: 'yes' } } },
    'application/merge-patch+json',
  );
  assert.is(label.status, 200);
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('"watched"')) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += new TextDecoder().decode(chunk.value);
  }
  ac.abort();
  const events = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } });
  assert.ok(events.every((e) => e.type === 'MODIFIED' && e.object.metadata.name === 'thermometer'));
});

t(
  'kubectl create, apply and delete of devices and models: schema-checked, applied through the mapper',
  async () => {
    const lamp = device('lamp', 'virtual').replace('thermometer-model', 'lamp-model');
    const lampModel = MODEL.replace('name: thermometer-model', 'name: lamp-model');
    const created = await kubectl(agent.url, ['create', '-f', '-'], { input: `${lampModel}---\n${lamp}` });
    assert.is(created.code, 0, created.stderr);
    assert.match(created.stdout, 'devicemodel.devices.kubeedge.io/lamp-model created');
    assert.match(created.stdout, 'device.devices.kubeedge.io/lamp created');
    assert.ok(
      await waitFor(() => vm.devices.has('default/lamp'), 120_000, 200),
      'lamp never reached the mapper',
    );
    assert.ok(
      await waitFor(
        async () => reported(await getDevice(agent.url, 'lamp'), 'target-temperature') === '22',
        120_000,
        200,
      ),
      'no report from the mapper',
    );
    // What the CRD schema refuses, the node refuses with the API server's cause.
    const bad = await kubectl(agent.url, ['apply', '-f', '-'], {
      input: lampModel.replace('type: BOOLEAN', 'type: boolean'),
    });
    assert.is(bad.code, 1);
    assert.match(bad.stderr, 'spec.properties[2].type: Unsupported value: "boolean"');
    const typed = await kubectl(agent.url, ['create', '-f', '-'], {
      input: lamp
        .replace('name: lamp', 'name: lamp-2')
        .replace('reportCycle: 200000000', 'reportCycle: fast'),
    });
    assert.is(typed.code, 1);
    assert.match(typed.stderr, 'must be of type integer');
    const deleted = await kubectl(agent.url, ['delete', 'device', 'lamp']);
    assert.is(deleted.code, 0, deleted.stderr);
    assert.match(deleted.stdout, 'device.devices.kubeedge.io "lamp" deleted');
    assert.ok(
      await waitFor(() => !vm.devices.has('default/lamp'), 120_000, 200),
      'the mapper still has lamp',
    );
    // A manifest's device is changed by editing its file.
    const manifest = await kubectl(agent.url, ['delete', 'device', 'thermometer']);
    assert.is(manifest.code, 1);
    assert.match(manifest.stderr, 'devices.yaml');
    assert.is((await kubectl(agent.url, ['delete', 'devicemodel', 'lamp-model'])).code, 0);
  },
);

t.run();
