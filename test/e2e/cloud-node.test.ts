// Outpost as a node of a real cluster (kube-apiserver 1.20.2 from the cloud lab): registration
// seen by the real kubectl as admin, the Lease renewed, and the link cut and restored both at a
// proxy and by stopping the API server, noticed at once and recovered without a restart.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  const cacheDir = mkdtempSync(join(tmpdir(), 'outpost-kubectl-cache-'));
  /** The real kubectl against Outpost's local API: resolves with { code, stdout, stderr }. */
  const localKubectl = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        'kubectl',
        ['--server', agent.url, '--cache-dir', cacheDir, ...args],
        { timeout: 60_000, env: { ...process.env, KUBECONFIG: '/dev/null' } },
        (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );

  test.before(async () => {
    agent = await startTestAgent({
      nodeName: node,
      flags: { cloud: lab.nodeKubeconfig(node, lab.proxy.url) },
    });
  });
  test.after(async () => {
    await agent?.stop();
    await lab.stop();
    rmSync(cacheDir, { recursive: true, force: true });
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

  test('online, kubectl get nodes through the local API passes through to the API server', async () => {
    assert.ok(await waitFor(() => agent.cloud?.link.online, 60_000));
    const r = await localKubectl(['get', 'nodes']);
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION/);
    assert.match(r.stdout, new RegExp(`${node}\\s+Ready`));
    // Services are never held locally: the `kubernetes` Service can only come from the API server.
    const svc = await localKubectl(['get', 'services', '-n', 'default']);
    assert.is(svc.code, 0, svc.stderr);
    assert.match(svc.stdout, /^kubernetes\s+ClusterIP/m);
    // What the metabase holds still answers locally (pods), and with the link cut it still does.
    assert.is((await fetch(`${agent.url}/api/v1/pods`)).status, 200);
  });

  test('offline, pass-through reads answer 503 with a Status; local reads still answer', async () => {
    lab.proxy.cut();
    try {
      assert.ok(await waitFor(() => agent.cloud?.link.state === 'offline', 60_000, 100), 'still online');
      const res = await fetch(`${agent.url}/api/v1/namespaces/default/services`);
      assert.is(res.status, 503);
      const status = (await res.json()) as { kind: string; reason: string; message: string };
      assert.is(status.kind, 'Status');
      assert.is(status.reason, 'ServiceUnavailable');
      assert.match(status.message, /cloud link is offline/);
      assert.is((await fetch(`${agent.url}/api/v1/pods`)).status, 200);
      // Offline, the nodes list is this node, from the host (an offline-first answer, not a 503).
      const nodes = await fetch(`${agent.url}/api/v1/nodes`);
      assert.is(nodes.status, 200);
      const list = (await nodes.json()) as { items: { metadata: { name: string } }[] };
      assert.equal(
        list.items.map((n) => n.metadata.name),
        [node],
      );
    } finally {
      lab.proxy.restore();
    }
    assert.ok(await waitFor(() => agent.cloud?.link.online, 60_000, 100), 'not back online');
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
