// KubeEdge devices from a real cluster (kube-apiserver 1.20.2 from the cloud lab) to the reference
// DMI mapper on real unix sockets: without the CRDs, and without the permission, the node says so
// in one log line; once a cluster admin applies deploy/crds/ with the real kubectl, a Device bound
// to the node and its DeviceModel reach the mapper, the mapper's reported values come back into the
// Device's status in the cloud, a desired value changed in the cloud reaches the mapper, and a
// device deleted in the cloud leaves the metabase and the mapper. Every wait polls a condition with
// a generous deadline. No container runtime is needed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ManagerClient } from '#lib/dmi/manager-client.ts';
import type { VirtualMapper } from '#lib/dmi/virtual-mapper.ts';
import type { Device } from '#lib/kube/devices.ts';
import {
  captureLogger,
  type LogLine,
  kubectl as localKubectl,
  startTestAgent,
  type TestAgent,
} from '../helpers/agent.ts';
import { cloudLabOrSkip } from '../helpers/cloud.ts';
import { api, device as deviceYaml, MODEL, startMapper } from '../helpers/devices.ts';
import { waitFor } from '../helpers/lab.ts';

const FILE = 'test/e2e/cloud-devices.test.ts';
const cloud = await cloudLabOrSkip(FILE);
if (cloud) {
  const suffix = Math.random().toString(36).slice(2, 7);
  const root = mkdtempSync(join(tmpdir(), 'outpost-cloud-dev-'));
  const crds = join(import.meta.dirname, '..', '..', 'deploy', 'crds');
  const kubectl = cloud.kubectl;
  const agents: TestAgent[] = [];
  let vm: VirtualMapper | undefined;

  /** An agent joined as `node`, its log lines kept. */
  const join_ = async (node: string, lines: LogLine[]) => {
    const agent = await startTestAgent({
      nodeName: node,
      log: captureLogger(lines),
      flags: { cloud: cloud.nodeKubeconfig(node, cloud.proxy.url) },
    });
    agents.push(agent);
    assert.ok(await waitFor(() => agent.cloud?.link.online, 60_000), 'the link never came up');
    return agent;
  };
  const deviceLines = (lines: LogLine[]) =>
    lines.filter((l) => l.fields.module === 'cloud-devices' && l.level !== 'debug');
  const cloudDevice = async (name: string): Promise<Device | undefined> => {
    const out = await kubectl(['get', 'device', name, '-o', 'json', '--ignore-not-found']);
    return out.trim() ? (JSON.parse(out) as Device) : undefined;
  };
  const reportedIn = (d: Device | undefined, property: string) =>
    d?.status?.twins?.find((t) => t.propertyName === property)?.reported?.value;

  test.after(async () => {
    await vm?.stop();
    for (const a of agents) await a.stop();
    await cloud.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test('a cluster without the device CRDs: one clear log line, nothing else', async () => {
    const lines: LogLine[] = [];
    const agent = await join_(`nocrd-${suffix}`, lines);
    assert.ok(await waitFor(() => deviceLines(lines).length > 0, 60_000, 200), 'no log line about devices');
    // The pods' module has come up and run too: the node is fully joined, devices stay quiet.
    assert.ok(await waitFor(() => agent.cloud?.link.online, 60_000));
    const said = deviceLines(lines);
    assert.is(said.length, 1, JSON.stringify(said));
    assert.match(said[0]!.msg ?? '', 'no devices.kubeedge.io/v1beta1', JSON.stringify(said));
    await agents.pop()!.stop();
  });

  test('the CRDs without the permission: one warning that names the RBAC to apply', async () => {
    await kubectl(['apply', '-f', join(crds, 'devices.kubeedge.io.yaml')]);
    await kubectl([
      'wait',
      '--for',
      'condition=established',
      '--timeout=120s',
      'crd/devices.devices.kubeedge.io',
      'crd/devicemodels.devices.kubeedge.io',
    ]);
    // Discovery follows the CRDs asynchronously: the node's first look must find the group served.
    const served = async () => {
      const out = await kubectl(['get', '--raw', '/apis/devices.kubeedge.io/v1beta1']).catch(() => '{}');
      const names = ((JSON.parse(out) as { resources?: { name: string }[] }).resources ?? []).map(
        (r) => r.name,
      );
      return names.includes('devices') && names.includes('devicemodels');
    };
    assert.ok(await waitFor(served, 120_000, 500), 'the device group is not in discovery');
    const lines: LogLine[] = [];
    await join_(`norbac-${suffix}`, lines);
    assert.ok(await waitFor(() => deviceLines(lines).length > 0, 60_000, 200), 'no log line');
    const said = deviceLines(lines);
    assert.is(said.length, 1, JSON.stringify(said));
    assert.is(said[0]!.level, 'warn');
    assert.match(said[0]!.msg ?? '', 'node-rbac.yaml');
    await agents.pop()!.stop();
  });

  test('a Device bound to the node reaches the mapper; its reported values reach the cloud', async () => {
    const node = `dev-${suffix}`;
    await kubectl(['apply', '-f', join(crds, 'node-rbac.yaml')]);
    // RBAC reaches the authorizer through an informer: wait until the node may list devices.
    const can = () =>
      kubectl([
        'auth',
        'can-i',
        'list',
        'devices.devices.kubeedge.io',
        '--as',
        `system:node:${node}`,
        '--as-group',
        'system:nodes',
      ]).catch(() => 'no');
    assert.ok(await waitFor(async () => (await can()).trim() === 'yes', 60_000, 500), 'RBAC never applied');
    const bound = (name: string, nodeName: string) =>
      deviceYaml(name, 'virtual').replace('spec:\n', `spec:\n  nodeName: ${nodeName}\n`);
    await kubectl(
      ['apply', '-f', '-'],
      `${MODEL}---\n${bound('cloud-thermo', node)}---\n${bound('elsewhere', 'other-node')}`,
    );

    const lines: LogLine[] = [];
    const agent = await join_(node, lines);
    assert.ok(
      await waitFor(() => agent.store.devices.get('default', 'cloud-thermo'), 60_000, 200),
      `not synced: ${JSON.stringify(deviceLines(lines))}`,
    );
    // Custom resources take no spec.nodeName field selector (1.20): the node filters, as KubeEdge does.
    assert.ok(
      deviceLines(lines).some((l) => l.fields.filter === 'client-side'),
      JSON.stringify(deviceLines(lines)),
    );
    // Listed in one go: the other node's device is not here, the model is.
    assert.is(agent.store.devices.get('default', 'elsewhere'), undefined);
    assert.is(agent.store.devices.record('default', 'cloud-thermo')!.source, 'cloud');
    assert.ok(await waitFor(() => agent.store.deviceModels.get('default', 'thermometer-model'), 60_000, 200));

    vm = await startMapper(join(root, 'virtual.sock'), join(agent.dataDir, 'dmi.sock'));
    assert.ok(await waitFor(() => vm!.devices.has('default/cloud-thermo'), 60_000, 200), 'not at the mapper');
    const reported = await waitFor(
      async () => {
        const d = await cloudDevice('cloud-thermo');
        return reportedIn(d, 'target-temperature') === '22' && d?.status?.state === 'ok' ? d : undefined;
      },
      120_000,
      500,
    );
    assert.ok(
      reported,
      `no reported status in the cloud: ${JSON.stringify((await cloudDevice('cloud-thermo'))?.status)}`,
    );
    assert.ok(reported.status?.lastOnlineTime);
  });

  test('a desired value changed in the cloud reaches the mapper and comes back reported; local edits are refused', async () => {
    const agent = agents.at(-1)!;
    const d = (await cloudDevice('cloud-thermo'))!;
    const properties = d.spec.properties!.map((p) =>
      p.name === 'target-temperature' ? { ...p, desired: { value: '25' } } : p,
    );
    await kubectl([
      'patch',
      'device',
      'cloud-thermo',
      '--type',
      'merge',
      '-p',
      JSON.stringify({ spec: { properties } }),
    ]);
    assert.ok(
      await waitFor(
        () => vm!.devices.get('default/cloud-thermo')?.values.get('target-temperature') === '25',
        120_000,
        200,
      ),
      'the new desired value never reached the mapper',
    );
    assert.ok(
      await waitFor(
        async () => reportedIn(await cloudDevice('cloud-thermo'), 'target-temperature') === '25',
        120_000,
        500,
      ),
      'the new value was not reported to the cloud',
    );
    const local = await api<{ reason: string }>(
      agent.url,
      'PATCH',
      '/apis/devices.kubeedge.io/v1beta1/namespaces/default/devices/cloud-thermo',
      { metadata: { labels: { here: 'yes' } } },
      'application/merge-patch+json',
    );
    assert.is(local.status, 403);
  });

  test('a report made while the link is cut reaches the Device in the cloud after reconnect', async () => {
    const agent = agents.at(-1)!;
    cloud.proxy.cut();
    try {
      assert.ok(await waitFor(() => agent.cloud?.link.state === 'offline', 60_000, 100), 'never offline');
      const dmi = new ManagerClient(join(agent.dataDir, 'dmi.sock'));
      try {
        // A property the mapper does not report: nothing overwrites it.
        await dmi.reportStatus('default', 'cloud-thermo', [
          {
            propertyName: 'offline-note',
            reported: { value: 'noted offline', metadata: {} },
            observedDesired: null,
          },
        ]);
      } finally {
        dmi.close();
      }
      assert.ok(agent.store.outbox.depth() > 0, 'nothing queued while offline');
    } finally {
      cloud.proxy.restore();
    }
    assert.ok(
      await waitFor(
        async () => reportedIn(await cloudDevice('cloud-thermo'), 'offline-note') === 'noted offline',
        120_000,
        500,
      ),
      `not in the cloud: ${JSON.stringify((await cloudDevice('cloud-thermo'))?.status)}`,
    );
  });

  test('the node refuses what the API server refuses, in the same words (kubectl against both)', async () => {
    const agent = agents.at(-1)!;
    const model = MODEL.replace('name: thermometer-model', 'name: diff-model');
    await kubectl(['apply', '-f', '-'], model);
    const local = await localKubectl(agent.url, ['apply', '-f', '-'], { input: model });
    assert.is(local.code, 0, local.stderr);
    const dev = (name: string) =>
      deviceYaml(name, 'virtual').replace('name: thermometer-model', 'name: diff-model');
    const cases = [
      model.replace('name: diff-model', 'name: bad-type').replace('type: BOOLEAN', 'type: boolean'),
      dev('bad-cycle').replace('reportCycle: 200000000', 'reportCycle: fast'),
      dev('bad-desired').replace('value: "22"', 'value: 22'),
      dev('no-value').replace('desired:\n        value: "true"', 'desired: {metadata: {a: b}}'),
      dev('no-name').replace('- name: temperature', '- reportToCloud: true'),
    ];
    for (const input of cases) {
      // --validate=false: the servers' own answers, not kubectl's client-side check of the cloud's OpenAPI.
      const remote = await kubectl(['create', '--validate=false', '-f', '-'], input).then(
        () => 'accepted',
        (e: Error) => e.message.replace(/^kubectl [^:]*: /, ''),
      );
      const here = await localKubectl(agent.url, ['create', '--validate=false', '-f', '-'], { input });
      assert.is(here.code, 1, `accepted locally:\n${input}`);
      // 1.20's schema errors drop list indices (spec.properties.type); today's API servers, and
      // Outpost, name the item (spec.properties[2].type).
      const plain = (t: string) => t.trim().replace(/\[\d+\]/g, '');
      assert.is(plain(here.stderr), plain(remote), input);
    }
  });

  test('a device deleted in the cloud leaves the metabase and the mapper', async () => {
    const agent = agents.at(-1)!;
    await kubectl(['delete', 'device', 'cloud-thermo']);
    assert.ok(
      await waitFor(() => !agent.store.devices.get('default', 'cloud-thermo'), 60_000, 200),
      'still in the metabase',
    );
    assert.ok(
      await waitFor(() => !vm!.devices.has('default/cloud-thermo'), 60_000, 200),
      'still at the mapper',
    );
    // Its model is no longer referenced by a device of this node.
    assert.ok(
      await waitFor(() => !agent.store.deviceModels.get('default', 'thermometer-model'), 60_000, 200),
    );
  });
}

test.run();
