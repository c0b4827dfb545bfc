// The MQTT bridge against a real Mosquitto on loopback: KubeEdge twin topics, Home Assistant
// discovery, desired writes through the reference mapper, the last will, and republishing after the
// broker comes back empty. No containerd needed. Every wait polls for an outcome.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { VirtualMapper } from '#lib/dmi/virtual-mapper.ts';
import { startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { desired, device, getDevice, startMapper, writeDevices } from '../helpers/devices.ts';
import { waitFor } from '../helpers/lab.ts';
import { type Broker, type Recorder, record, startBroker } from '../helpers/mosquitto.ts';
import { spawnOutpost } from '../helpers/outpost-process.ts';

const root = mkdtempSync(join(tmpdir(), 'outpost-mqtt-'));
const manifests = join(root, 'manifests');
const dataDir = join(root, 'data');
let broker: Broker;
let agent: TestAgent;
let vm: VirtualMapper | undefined;
let rec: Recorder;

const pod = (name: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default}
spec:
  containers: [{name: app, image: outpost.local/busybox:latest}]
`;

const t = suite('mqtt');
const WAIT = 60_000;
const HA = 'homeassistant';
const NODE = 'outpost_edge-1';

t.before(async () => {
  mkdirSync(manifests, { recursive: true });
  writeDevices(manifests, [device('thermometer', 'virtual')]);
  writeFileSync(join(manifests, 'web.yaml'), pod('web'));
  broker = await startBroker();
  rec = await record(broker.url);
  agent = await startTestAgent({ manifests, dataDir, flags: { mqtt: broker.url } });
  vm = await startMapper(join(root, 'virtual.sock'), join(dataDir, 'dmi.sock'));
});

t.after(async () => {
  await vm?.stop();
  await agent?.stop();
  await rec?.close();
  await broker?.stop();
  rmSync(root, { recursive: true, force: true });
});

const config = (component: string, object: string) => rec.last(`${HA}/${component}/${NODE}/${object}/config`);
const parsed = (s: string | undefined) => (s ? JSON.parse(s) : undefined);

t(
  'Home Assistant discovery: each property by its model, each pod as Ready, restarts and restart',
  async () => {
    assert.ok(await waitFor(() => rec.last('outpost/edge-1/availability') === 'online', WAIT), 'online');
    const number = parsed(
      await waitFor(() => config('number', 'default_thermometer_target-temperature'), WAIT),
    );
    assert.ok(number, 'target-temperature is a number');
    assert.is(number.command_topic, 'outpost/edge-1/devices/thermometer/target-temperature/set');
    assert.is(number.state_topic, 'outpost/edge-1/devices/thermometer/state');
    assert.equal([number.min, number.max, number.step], [5, 35, 0.1]);
    assert.equal(number.availability, [{ topic: 'outpost/edge-1/availability' }]);
    assert.is(number.device.via_device, NODE);
    const sensor = parsed(await waitFor(() => config('sensor', 'default_thermometer_temperature'), WAIT));
    assert.is(sensor.unit_of_measurement, '°C');
    assert.is(sensor.command_topic, undefined, 'a read-only property takes no commands');
    const sw = parsed(await waitFor(() => config('switch', 'default_thermometer_switch'), WAIT));
    assert.equal([sw.payload_on, sw.payload_off], ['true', 'false']);
    assert.equal(sw.device.identifiers, number.device.identifiers, 'one HA device per Outpost device');

    const ready = parsed(await waitFor(() => config('binary_sensor', 'pod_default_web_ready'), WAIT));
    assert.is(ready.state_topic, 'outpost/edge-1/pods/default/web/state');
    assert.ok(await waitFor(() => config('sensor', 'pod_default_web_restarts'), WAIT));
    const button = parsed(await waitFor(() => config('button', 'pod_default_web_restart'), WAIT));
    assert.is(button.command_topic, 'outpost/edge-1/pods/default/web/restart');
    assert.equal(parsed(rec.last('outpost/edge-1/pods/default/web/state')), {
      ready: 'OFF',
      restarts: 0,
      phase: 'Pending',
    });
    // Retained at the broker: a client connecting now gets them at once.
    const late = await record(broker.url);
    try {
      assert.ok(await waitFor(() => late.last(`${HA}/button/${NODE}/pod_default_web_restart/config`), WAIT));
    } finally {
      await late.close();
    }
  },
);

t('the dashboard summary shows the broker link (MqttConnected with the broker)', async () => {
  const summary = async () => {
    const res = await fetch(`${agent.url}/ui/parts/summary`, { headers: agent.admin });
    return res.ok ? await res.text() : `${res.status}`;
  };
  const html = await waitFor(async () => {
    const h = await summary();
    return /MqttConnected/.test(h) && h.includes(`MQTT ${broker.url}`) ? h : undefined;
  }, 90_000);
  assert.ok(html, `the summary never showed the broker link:\n${await summary()}`);
});

t('twin reports on $hw/events/device/{id}/twin/update/document, delta and state/update', async () => {
  const doc = await waitFor(() => {
    for (const m of rec.on(/^\$hw\/events\/device\/thermometer\/twin\/update\/document$/)) {
      const d = JSON.parse(m.payload);
      if (d.twin?.['target-temperature']?.current?.actual?.value === '22') return d;
    }
    return undefined;
  }, WAIT);
  assert.ok(doc, 'a document with the reported value');
  assert.is(doc.twin['target-temperature'].current.expected.value, '22');
  assert.is(doc.twin['target-temperature'].current.metadata.type, 'float');
  assert.type(doc.timestamp, 'number');
  const state = await waitFor(() => rec.last('$hw/events/device/thermometer/state/update'), WAIT);
  assert.is(JSON.parse(state!).device.state, 'ok');
  const values = await waitFor(() => {
    const s = parsed(rec.last('outpost/edge-1/devices/thermometer/state'));
    return s?.switch === 'true' ? s : undefined;
  }, WAIT);
  assert.ok(values, 'the HA state topic carries the reported values');
});

t(
  'a desired write on twin/update goes through the mapper, is audited and answered on twin/update/result',
  async () => {
    const from = rec.messages.length;
    await rec.client.publishAsync(
      '$hw/events/device/thermometer/twin/update',
      JSON.stringify({
        event_id: 'e-25',
        timestamp: 1,
        twin: { 'target-temperature': { expected: { value: '25' } } },
      }),
      { qos: 1 },
    );
    const result = await waitFor(
      () =>
        rec
          .on(/^\$hw\/events\/device\/thermometer\/twin\/update\/result$/, from)
          .map((m) => JSON.parse(m.payload))
          .find((r) => r.event_id === 'e-25'),
      WAIT,
    );
    assert.ok(result, 'a result');
    assert.is(result.code, undefined);
    assert.is(result.twin['target-temperature'].expected.value, '25');
    assert.is(desired(await getDevice(agent.url, 'thermometer'), 'target-temperature'), '25');
    assert.is(
      desired(vm!.devices.get('default/thermometer')!.device, 'target-temperature'),
      '25',
      'the mapper has it',
    );
    // The delta says what the device has not caught up with yet, or the document shows it did.
    const caughtUp = await waitFor(
      () =>
        rec
          .on(/twin\/update\/document$/, from)
          .some((m) => JSON.parse(m.payload).twin['target-temperature']?.current?.actual?.value === '25'),
      WAIT,
    );
    assert.ok(caughtUp, 'the mapper reports the new value');
    const audit = agent.store.audit.list({ limit: 10 }).find((a) => a.verb === 'MQTT');
    assert.is(audit?.user, 'mqtt:anonymous');
    assert.is(audit?.code, 200);
    assert.is(audit?.path, '$hw/events/device/thermometer/twin/update');
    assert.equal(audit?.detail, { desired: { 'target-temperature': '25' } });
  },
);

t('invalid values and unknown devices are refused with edgecore’s {code, reason}', async () => {
  const from = rec.messages.length;
  const send = (id: string, body: unknown) =>
    rec.client.publishAsync(`$hw/events/device/${id}/twin/update`, JSON.stringify(body), { qos: 1 });
  await send('thermometer', {
    event_id: 'e-50',
    twin: { 'target-temperature': { expected: { value: '50' } } },
  });
  await send('ghost', { event_id: 'e-ghost', twin: { x: { expected: { value: '1' } } } });
  await send('thermometer', { event_id: 'e-nope', twin: { nope: { expected: { value: '1' } } } });
  const results = await waitFor(() => {
    const r = rec.on(/twin\/update\/result$/, from).map((m) => JSON.parse(m.payload));
    return r.length >= 3 ? r : undefined;
  }, WAIT);
  const by = (id: string) => results!.find((r) => r.event_id === id);
  assert.is(by('e-50').code, 422);
  assert.match(by('e-50').reason, 'must be at most 35');
  assert.is(by('e-ghost').code, 404);
  assert.is(by('e-nope').code, 422);
  assert.is(desired(await getDevice(agent.url, 'thermometer'), 'target-temperature'), '25', 'unchanged');
});

t('Home Assistant commands: a switch and a number write desired values', async () => {
  await rec.client.publishAsync('outpost/edge-1/devices/thermometer/switch/set', 'false', { qos: 1 });
  assert.ok(
    await waitFor(async () => desired(await getDevice(agent.url, 'thermometer'), 'switch') === 'false', WAIT),
  );
  await rec.client.publishAsync('outpost/edge-1/devices/thermometer/target-temperature/set', '21.5', {
    qos: 1,
  });
  assert.ok(
    await waitFor(
      async () => desired(await getDevice(agent.url, 'thermometer'), 'target-temperature') === '21.5',
      WAIT,
    ),
  );
});

t('mapper down: the write is refused with 503 on twin/update/result and nothing is stored', async () => {
  await vm!.stop();
  vm = undefined;
  const from = rec.messages.length;
  await rec.client.publishAsync(
    '$hw/events/device/thermometer/twin/update',
    JSON.stringify({ event_id: 'e-down', twin: { 'target-temperature': { expected: { value: '30' } } } }),
    { qos: 1 },
  );
  const result = await waitFor(
    () =>
      rec
        .on(/twin\/update\/result$/, from)
        .map((m) => JSON.parse(m.payload))
        .find((r) => r.event_id === 'e-down'),
    WAIT,
  );
  assert.is(result?.code, 503);
  assert.match(result.reason, 'unavailable');
  assert.is(desired(await getDevice(agent.url, 'thermometer'), 'target-temperature'), '21.5');
  const audit = agent.store.audit.list({ limit: 10 }).find((a) => a.verb === 'MQTT');
  assert.is(audit?.code, 503);
});

t('a pod restart button without a runtime is refused (503) and audited', async () => {
  await rec.client.publishAsync('outpost/edge-1/pods/default/web/restart', 'PRESS', { qos: 1 });
  const audit = await waitFor(
    () =>
      agent.store.audit.list({ limit: 10 }).find((a) => a.path === 'outpost/edge-1/pods/default/web/restart'),
    WAIT,
  );
  assert.is(audit?.code, 503);
  assert.is(audit?.name, 'web');
});

t('the broker restarts empty: Outpost reconnects and republishes the latest of every topic', async () => {
  const port = broker.port;
  await broker.stop();
  // While the broker is down: a new pod and a removed one.
  writeFileSync(join(manifests, 'db.yaml'), pod('db'));
  rmSync(join(manifests, 'web.yaml'));
  assert.ok(
    await waitFor(
      () => agent.store.pods.get('default', 'db') && !agent.store.pods.get('default', 'web'),
      WAIT,
    ),
  );
  broker = await startBroker({ port });
  const fresh = await record(broker.url);
  try {
    assert.ok(
      await waitFor(() => fresh.last(`${HA}/button/${NODE}/pod_default_db_restart/config`), WAIT),
      'the new pod, discovered while the broker was down',
    );
    assert.ok(
      await waitFor(
        () => fresh.last(`${HA}/number/${NODE}/default_thermometer_target-temperature/config`),
        WAIT,
      ),
    );
    assert.ok(await waitFor(() => fresh.last('outpost/edge-1/availability') === 'online', WAIT));
    assert.ok(await waitFor(() => fresh.last('$hw/events/device/thermometer/twin/update/document'), WAIT));
    // The removed pod left nothing retained behind.
    // (an empty retained message deletes; a client subscribed in time sees it as '').
    assert.not.ok(fresh.last(`${HA}/button/${NODE}/pod_default_web_restart/config`));
  } finally {
    await fresh.close();
  }
  assert.ok(
    await waitFor(
      () => agent.supervisor.snapshot().find((m) => m.name === 'mqtt')?.state === 'running',
      WAIT,
    ),
  );
});

t('the last will: a killed agent shows offline; a stopped one says offline itself', async () => {
  const dir = join(root, 'killed');
  mkdirSync(dir);
  const proc = await spawnOutpost({
    dataDir: dir,
    runtimeEndpoint: `unix://${join(root, 'no-runtime.sock')}`,
    nodeName: 'edge-2',
    args: ['--mqtt', broker.url],
  });
  const watch = await record(broker.url);
  try {
    assert.ok(await waitFor(() => watch.last('outpost/edge-2/availability') === 'online', WAIT), proc.logs());
    await proc.kill9();
    assert.ok(await waitFor(() => watch.last('outpost/edge-2/availability') === 'offline', WAIT));
    const from = watch.messages.length;
    await agent.close();
    assert.ok(
      await waitFor(
        () => watch.on(/^outpost\/edge-1\/availability$/, from).some((m) => m.payload === 'offline'),
        WAIT,
      ),
      'a clean stop publishes offline',
    );
  } finally {
    await proc.kill9();
    await watch.close();
  }
});

t.run();
