// The motivating case of module supervision (KubeEdge's edgecore exiting when it starts before
// containerd): Outpost starts while nothing listens on its runtime socket. It serves the pods in
// its metabase at once, marks them RuntimeReachable=False, shows the runtime module backing off,
// after the grace period shows them Ready=False (RuntimeUnreachable), and once containerd comes up
// on another watched socket (a lab of this suite's own, started after Outpost) finds it and runs
// the pods.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import { RUNTIME_REACHABLE } from '#lib/pods/runtime/reachability.ts';
import { createStore } from '#lib/store/index.ts';
import { DEFAULT_LAB_DIR, LAB_IMAGES, type Lab, startLab } from '../../scripts/lab.ts';
import { startTestAgent } from '../helpers/agent.ts';
import { ci, waitFor } from '../helpers/lab.ts';

const hasContainerd = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v containerd'], { stdio: 'ignore' });
    return process.platform === 'linux' && process.getuid?.() === 0;
  } catch {
    return false;
  }
})();

if (!hasContainerd && !ci) {
  process.stderr.write('skipping test/e2e/runtime-late.test.ts: needs root and containerd\n');
  test.skip('test/e2e/runtime-late.test.ts (no containerd)', () => {});
} else {
  // A short directory: the socket path must fit in sun_path. Its images come from the shared
  // lab's cache when there is one, so nothing is rebuilt.
  const labDir = mkdtempSync(join(tmpdir(), 'olate-'));
  const shared = join(process.env.OUTPOST_LAB_DIR ?? DEFAULT_LAB_DIR, 'images');
  if (existsSync(shared)) cpSync(shared, join(labDir, 'images'), { recursive: true });
  // The lab's socket, not the configured one: Outpost watches both and takes the one that answers.
  const endpoint = `unix://${join(labDir, 'containerd.sock')}`;
  const configured = `unix://${join(labDir, 'configured.sock')}`;
  const ns = `late-${Math.random().toString(36).slice(2, 7)}`;

  /** A pod that sleeps, on the lab's image. */
  const sleeper = (name: string, namespace: string, nodeName?: string): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: {
      ...(nodeName ? { nodeName } : {}),
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'main',
          image: LAB_IMAGES.app,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', 'exec sleep 3600'],
        },
      ],
    },
  });

  // The metabase as an earlier run left it: two pods bound to this node, never run here yet.
  const dataDir = mkdtempSync(join(tmpdir(), 'outpost-e2e-late-'));
  {
    const mb = openMetabase(dataDir);
    const store = createStore(mb, { host: 'late-node' });
    for (const name of ['web', 'worker']) store.pods.put(sleeper(name, ns, 'late-node'), 'manifest');
    mb.close();
  }

  const agent = await startTestAgent({
    dataDir,
    runtimeEndpoint: configured,
    nodeName: 'late-node',
    agent: { runtimeCandidates: [configured, endpoint], runtimeUnreachableGraceMs: 2_000 },
  });
  const get = (path: string) => fetch(agent.url + path);
  const pod = async (name: string) =>
    (await (await get(`/api/v1/namespaces/${ns}/pods/${name}`)).json()) as Pod;
  const reachable = (p: Pod) => p.status?.conditions?.find((c) => c.type === RUNTIME_REACHABLE);
  let lab: Lab | undefined;

  test('the first read is served at once from the metabase, the runtime being absent', async () => {
    const res = await get(`/api/v1/namespaces/${ns}/pods`);
    assert.is(res.status, 200);
    const list = (await res.json()) as { items: Pod[] };
    assert.equal(
      list.items.map((p) => p.metadata.name),
      ['web', 'worker'],
    );
  });

  test('each pod says the runtime is unreachable, naming the endpoint', async () => {
    const c = await waitFor(async () => reachable(await pod('web')));
    assert.ok(c, 'the condition appears');
    assert.is(c.status, 'False');
    assert.is(c.reason, 'RuntimeUnavailable');
    assert.ok(c.message?.includes(configured), c.message);
    assert.is((await pod('web')).status?.phase, 'Pending');
  });

  test('after the grace period the pods show Ready=False, reason RuntimeUnreachable', async () => {
    const ready = await waitFor(async () => {
      const c = (await pod('web')).status?.conditions?.find((x) => x.type === 'Ready');
      return c?.reason === 'RuntimeUnreachable' && c;
    }, 60_000);
    assert.ok(ready, JSON.stringify((await pod('web')).status));
    assert.is(ready.status, 'False');
  });

  test('a pod created through the API while the runtime is down is marked the same at once', async () => {
    // Its own namespace, so the checks on the two stored pods below stay theirs.
    const res = await fetch(`${agent.url}/api/v1/namespaces/${ns}-added/pods`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...agent.admin },
      body: JSON.stringify(sleeper('added', `${ns}-added`)),
    });
    assert.is(res.status, 201, await res.clone().text());
    const created = (await res.json()) as Pod;
    const p = (await (await get(`/api/v1/namespaces/${ns}-added/pods/added`)).json()) as Pod;
    const c = reachable(p);
    assert.equal([c?.status, c?.reason], ['False', 'RuntimeUnavailable'], JSON.stringify(p.status));
    const ready = p.status?.conditions?.find((x) => x.type === 'Ready');
    assert.equal([ready?.status, ready?.reason], ['False', 'RuntimeUnreachable'], JSON.stringify(p.status));
    assert.is(created.metadata.name, 'added');
  });

  test('/readyz?verbose shows the runtime module backing off; liveness is fine', async () => {
    const body = await waitFor(async () => {
      const text = await (await get('/readyz?verbose')).text();
      return /\[-\]runtime failed: backoff, restarts \d+, last error: .*ENOENT.*next retry in/.test(text)
        ? text
        : undefined;
    });
    assert.ok(body, 'runtime in backoff');
    assert.match(body, /\[\+\]api ok/);
    assert.is((await get('/livez')).status, 200);
  });

  test('containerd comes up: the pods start and become Running, the condition turns True', async () => {
    // Let the runtime module fall a few steps down the curve first (1 s, 2 s, then 4 s).
    await waitFor(() => agent.supervisor.snapshot().find((m) => m.name === 'runtime')!.restarts >= 2);
    lab = await startLab({ dir: labDir, log: () => {} });
    const up = Date.now();
    const atUp = agent.supervisor.snapshot().find((m) => m.name === 'runtime')!;
    const step = atUp.state === 'backoff' ? atUp.nextRetryAt! - atUp.since : 0;
    const running = await waitFor(
      async () => {
        const [web, worker] = [await pod('web'), await pod('worker')];
        return web.status?.phase === 'Running' && worker.status?.phase === 'Running' && [web, worker];
      },
      90_000,
      100,
    );
    assert.ok(running, JSON.stringify((await pod('web')).status));
    const runtime = agent.supervisor.snapshot().find((m) => m.name === 'runtime')!;
    // Information only (shared machines are noisy): how long after containerd answered.
    process.stderr.write(
      `runtime-late: pods Running ${Date.now() - up} ms after the lab was up; backoff step then ${step} ms, runtime restarts ${runtime.restarts}\n`,
    );
    const readyAgain = await waitFor(async () => {
      const [web, worker] = [await pod('web'), await pod('worker')];
      const ok = (p: Pod) => p.status?.conditions?.find((x) => x.type === 'Ready')?.status === 'True';
      return ok(web) && ok(worker);
    }, 60_000);
    assert.ok(readyAgain, JSON.stringify((await pod('web')).status));
    for (const p of running) {
      const c = reachable(p);
      assert.is(c?.status, 'True', JSON.stringify(c));
      assert.is(c?.reason, undefined);
      assert.ok(p.status?.containerStatuses?.[0]?.state?.running, JSON.stringify(p.status));
    }
    const cri = new CriClient({ endpoint });
    try {
      const containers = await cri.listContainers({
        labelSelector: { 'io.kubernetes.pod.namespace': ns },
        state: { state: 'CONTAINER_RUNNING' },
      });
      assert.is(containers.length, 2, 'both containers run in the runtime');
    } finally {
      cri.close();
    }
    const ready = await waitFor(async () => (await get('/readyz')).status === 200);
    assert.ok(ready, await (await get('/readyz?verbose')).text());
  });

  test.after(async () => {
    await agent.stop();
    await lab?.stop();
    rmSync(labDir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });
}

test.run();
