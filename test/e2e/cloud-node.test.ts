// Outpost as a node of a real cluster (kube-apiserver 1.20.2 from the cloud lab): registration
// seen by the real kubectl as admin, the Lease renewed, and the link cut and restored both at a
// proxy and by stopping the API server, noticed at once and recovered without a restart.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { cloudLabOrSkip } from '../helpers/cloud.ts';
import { waitFor } from '../helpers/lab.ts';

const lab = await cloudLabOrSkip('cloud-node');
if (lab) {
  const node = 'edge-node-1';
  let agent: TestAgent;
  const readyz = async () => (await fetch(`${agent.url}/readyz?verbose`)).text();
  const nodeReady = () =>
    lab
      .kubectl(['get', 'node', node, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'])
      .catch(() => '');

  test.before(async () => {
    agent = await startTestAgent({
      nodeName: node,
      flags: { cloud: lab.nodeKubeconfig(node, lab.proxy.url) },
    });
  });
  test.after(async () => {
    await agent?.stop();
    await lab.stop();
  });

  test('serve --cloud registers a Ready node that kubectl shows', async () => {
    assert.is(await waitFor(async () => (await nodeReady()) === 'True', 60_000, 500), true);
    const n = JSON.parse(await lab.kubectl(['get', 'node', node, '-o', 'json']));
    assert.is(n.metadata.labels['kubernetes.io/hostname'], node);
    assert.is(n.metadata.labels['kubernetes.io/os'], 'linux');
    assert.ok(n.status.capacity.cpu && n.status.capacity.memory && n.status.capacity.pods);
    assert.match(n.status.nodeInfo.kubeletVersion, /-outpost$/);
    const types = n.status.conditions.map((c: { type: string }) => c.type).sort();
    assert.equal(types, ['DiskPressure', 'MemoryPressure', 'PIDPressure', 'Ready']);
    assert.ok(n.status.daemonEndpoints.kubeletEndpoint.Port > 0);
    const table = await lab.kubectl(['get', 'nodes']);
    assert.match(table, new RegExp(`${node}\\s+Ready`));
  });

  test('the Lease in kube-node-lease is renewed', async () => {
    const renewTime = () =>
      lab
        .kubectl(['-n', 'kube-node-lease', 'get', 'lease', node, '-o', 'jsonpath={.spec.renewTime}'])
        .catch(() => '');
    const first = await waitFor(renewTime, 60_000, 500);
    assert.ok(first, 'no lease');
    assert.ok(await waitFor(async () => (await renewTime()) > first, 60_000, 1000), 'lease not renewed');
    const holder = await lab.kubectl([
      '-n',
      'kube-node-lease',
      'get',
      'lease',
      node,
      '-o',
      'jsonpath={.spec.holderIdentity}',
    ]);
    assert.is(holder, node);
  });

  test('a cut link shows offline at once and comes back after restoration', async () => {
    assert.ok(await waitFor(() => agent.cloud?.link.online, 60_000));
    lab.proxy.cut();
    assert.ok(await waitFor(() => agent.cloud?.link.state === 'offline', 60_000, 100), 'still online');
    assert.match(await readyz(), /cloud-link ok \(offline/);
    assert.match(await (await fetch(`${agent.url}/metrics`)).text(), /^outpost_cloud_link_online 0$/m);
    lab.proxy.restore();
    assert.ok(await waitFor(() => agent.cloud?.link.online, 60_000, 100), 'not back online');
    assert.match(await readyz(), /cloud-link ok \(online/);
    assert.match(await (await fetch(`${agent.url}/metrics`)).text(), /^outpost_cloud_link_online 1$/m);
  });

  test('the API server stopped and started again: offline, then online and the lease renewed', async () => {
    await lab.stopApiserver();
    assert.ok(await waitFor(() => agent.cloud?.link.state === 'offline', 60_000, 100), 'still online');
    await lab.startApiserver();
    assert.ok(await waitFor(() => agent.cloud?.link.online, 60_000, 100), 'not back online');
    const before = Date.now();
    const renewed = await waitFor(
      async () => {
        const t = await lab
          .kubectl(['-n', 'kube-node-lease', 'get', 'lease', node, '-o', 'jsonpath={.spec.renewTime}'])
          .catch(() => '');
        return t && Date.parse(t) >= before - 1000;
      },
      60_000,
      500,
    );
    assert.ok(renewed, 'lease not renewed after the API server came back');
    assert.is(await nodeReady(), 'True');
  });

  test.run();
}
