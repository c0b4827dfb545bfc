// npm run bench:cloud — the outbox after an outage: 1,000 entries queued while offline (events,
// as a node records them), then the time from the link restored to the outbox empty, against a
// real kube-apiserver 1.20.2 from the cloud lab with the node's own identity. The anchor, in the
// same run and on the same connection, is the naive sender: one request per entry, one after
// another. Printed side by side, with the ratio.
//
// Then 50 pods (busybox sleep, host network) on the lab's containerd, run by the bundled agent:
// its RSS with the pods from the cloud (serve --cloud, pods created by the admin with kubectl)
// beside the same pods from static manifests (no cloud link), and the requests the node made per
// pod started, from the API server's apiserver_request_total before and after (events apart: the
// fleet budget is at most 6 per pod started besides events). BENCH_PODS (default 50),
// OUTPOST_BENCH_LAB (default /tmp/outpost-lab-bench, a private containerd lab).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openMetabase } from '#db/open.ts';
import { systemClock } from '#lib/clock.ts';
import { createCloudContext } from '#lib/cloud/context.ts';
import { readKubeconfig } from '#lib/cloud/kubeconfig.ts';
import { contextRequest } from '#lib/cloud/list-watch.ts';
import { OutboxSender } from '#lib/cloud/outbox-sender.ts';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import { silentLogger } from '#lib/log.ts';
import { POD_NAMESPACE } from '#lib/pods/runtime/labels.ts';
import { createStore, type Store } from '#lib/store/index.ts';
import { startControlPlane } from '../scripts/cloud/plane.ts';
import { freePort } from '../scripts/free-port.ts';
import { startLab, stopLab } from '../scripts/lab.ts';
import { printTable, rssMb } from './lib.ts';

const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 1000);
const NODE = 'bench-node';
const NS = 'bench';
const PODS = Number(process.env.BENCH_PODS ?? 50);
const LAB_DIR = process.env.OUTPOST_BENCH_LAB ?? '/tmp/outpost-lab-bench';
const BUNDLE = process.env.OUTPOST_BUNDLE ?? 'dist/outpost.cjs';
const PODS_NODE = 'bench-pods-node';
const PODS_NS = 'bench-pods';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A store whose outbox holds ENTRIES distinct events (each its own object, as after an outage). */
function queued(tag: string): Store {
  const store = createStore(openMetabase(':memory:'), { host: NODE });
  store.outbox.enabled = true;
  for (let i = 0; i < ENTRIES; i++) {
    store.events.record(
      { kind: 'Pod', namespace: NS, name: `pod-${i % 50}`, uid: `uid-${i % 50}` },
      'Normal',
      'Queued',
      `${tag} entry ${i}`,
      'kubelet',
    );
  }
  return store;
}

const dir = mkdtempSync(join(tmpdir(), 'outpost-bench-cloud-'));
const plane = await startControlPlane({ dir, log: () => {} });
try {
  execFileSync('kubectl', ['--kubeconfig', plane.adminKubeconfig, 'create', 'namespace', NS]);
  const ctx = await createCloudContext({
    kubeConfig: readKubeconfig(plane.nodeKubeconfig(NODE)),
    nodeName: NODE,
    clock: systemClock,
    log: silentLogger,
  });
  const request = contextRequest(ctx);
  // Warm the connection (TLS, HTTP/2) so neither side pays for it.
  await request('GET', `/api/v1/namespaces/${NS}/events?limit=1`);

  const naive = queued('naive');
  let t = performance.now();
  let naiveRequests = 0;
  for (const e of naive.outbox.peek(ENTRIES)) {
    const ev = e.payload as { metadata: { name: string } };
    const r = await request('POST', `/api/v1/namespaces/${NS}/events`, {
      ...(e.payload as object),
      metadata: { name: ev.metadata.name, namespace: NS },
    });
    naiveRequests += 1;
    if (r.status >= 300) throw new Error(`naive POST: HTTP ${r.status}`);
    naive.outbox.ack([e.id]);
  }
  const naiveMs = performance.now() - t;

  const store = queued('outbox');
  const sender = new OutboxSender({ store, request, nodeName: NODE, log: silentLogger });
  t = performance.now();
  const sent = await sender.drain();
  const outboxMs = performance.now() - t;
  if (store.outbox.depth() !== 0 || sent !== ENTRIES)
    throw new Error(`outbox not drained: ${store.outbox.depth()} left`);

  const rows = [
    ['sender', 'entries', 'requests', 'link restored → outbox empty'],
    [
      'naive (one request per entry, in order)',
      String(ENTRIES),
      String(naiveRequests),
      `${naiveMs.toFixed(0)} ms`,
    ],
    ['Outpost outbox', String(ENTRIES), String(sender.requests), `${outboxMs.toFixed(0)} ms`],
  ];
  for (const r of rows) console.log(r.map((c, i) => c.padEnd(i === 0 ? 42 : 12)).join(''));
  console.log(`ratio outbox / naive: ${(outboxMs / naiveMs).toFixed(2)}`);
  await ctx.close();
  await podsBench(plane);
} finally {
  await plane.stop();
  rmSync(dir, { recursive: true, force: true });
}

/** A bench pod: busybox sleep on the host network. */
function benchPod(i: number, image: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `p-${String(i).padStart(2, '0')}`, namespace: PODS_NS },
    spec: {
      nodeName: PODS_NODE,
      hostNetwork: true,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }],
    },
  } as Pod;
}

interface Agent {
  child: ChildProcess;
  url: string;
  metric(name: string): Promise<number | undefined>;
  running(): Promise<number>;
  stop(): Promise<void>;
}

async function startAgent(dataDir: string, endpoint: string, args: string[]): Promise<Agent> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    [
      BUNDLE,
      'serve',
      '--listen',
      `127.0.0.1:${port}`,
      '--data-dir',
      dataDir,
      '--runtime-endpoint',
      endpoint,
      '--node-name',
      PODS_NODE,
      '--log-level',
      'warn',
      ...args,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`outpost exited with ${child.exitCode}`);
    if (
      await fetch(`${url}/livez`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await sleep(100);
  }
  return {
    child,
    url,
    async metric(name) {
      const text = await fetch(`${url}/metrics`).then(
        (r) => r.text(),
        () => '',
      );
      const line = text.split('\n').find((l) => l.startsWith(`${name} `));
      return line === undefined ? undefined : Number(line.slice(name.length + 1));
    },
    async running() {
      const r = await fetch(`${url}/api/v1/namespaces/${PODS_NS}/pods`).catch(() => undefined);
      if (!r?.ok) return 0;
      const { items } = (await r.json()) as { items: Pod[] };
      return items.filter((p) => p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.ready)
        .length;
    },
    async stop() {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(t);
    },
  };
}

async function until(what: string, fn: () => Promise<boolean>, timeoutMs = 600_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !(await fn()); await sleep(500))
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
}

/** RSS in steady state: the median of 5 samples 1 s apart. */
async function steadyRss(pid: number): Promise<number> {
  await sleep(5_000);
  const xs: number[] = [];
  for (let i = 0; i < 5; i++, await sleep(1_000)) xs.push(rssMb(pid));
  return xs.sort((a, b) => a - b)[2]!;
}

async function podsBench(plane: Awaited<ReturnType<typeof startControlPlane>>): Promise<void> {
  const lab = await startLab({ dir: LAB_DIR, keep: true, log: () => {} });
  const cri = new CriClient({ endpoint: lab.endpoint, timeoutMs: 120_000 });
  const work = mkdtempSync(join(tmpdir(), 'outpost-bench-cloud-pods-'));
  const kubectl = (args: string[], input?: string) =>
    execFileSync('kubectl', ['--kubeconfig', plane.adminKubeconfig, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(input ? { input } : {}),
    }).toString();
  const removePods = async () => {
    for (const s of await cri.listPodSandbox({ labelSelector: { [POD_NAMESPACE]: PODS_NS } })) {
      await cri.stopPodSandbox(s.id);
      await cri.removePodSandbox(s.id);
    }
  };
  const pods = Array.from({ length: PODS }, (_, i) => benchPod(i, lab.images.app));
  try {
    await removePods();
    // Anchor: the same pods from static manifests, no cloud link.
    const manifests = join(work, 'manifests');
    mkdirSync(manifests);
    writeFileSync(
      join(manifests, 'pods.json'),
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: pods }),
    );
    let agent = await startAgent(join(work, 'standalone'), lab.endpoint, ['--manifests', manifests]);
    await until('manifest pods running', async () => (await agent.running()) === PODS);
    const standaloneRss = await steadyRss(agent.child.pid!);
    await agent.stop();
    await removePods();

    // The same pods from the cloud.
    kubectl(['create', 'namespace', PODS_NS]);
    await until('default ServiceAccount', async () => {
      try {
        kubectl(['-n', PODS_NS, 'get', 'serviceaccount', 'default']);
        kubectl(['-n', PODS_NS, 'get', 'configmap', 'kube-root-ca.crt']);
        return true;
      } catch {
        return false;
      }
    });
    agent = await startAgent(join(work, 'cloud'), lab.endpoint, [
      '--cloud',
      plane.nodeKubeconfig(PODS_NODE),
      '--kubelet-port',
      '0',
    ]);
    await until('link online', async () => (await agent.metric('outpost_cloud_link_online')) === 1);
    await until('node registered', async () => {
      try {
        return kubectl(['get', 'node', PODS_NODE, '-o', 'name']).trim() !== '';
      } catch {
        return false;
      }
    });
    await sleep(3_000); // registration settled
    const before = await plane.requestCounts();
    kubectl(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: pods }));
    // Watched on the node (its local API and outbox), so no admin request lands in the counts.
    await until('cloud pods running', async () => (await agent.running()) === PODS);
    await until('outbox drained', async () => (await agent.metric('outpost_cloud_outbox_depth')) === 0);
    await sleep(3_000);
    await until('outbox drained', async () => (await agent.metric('outpost_cloud_outbox_depth')) === 0);
    const after = await plane.requestCounts();
    const cloudRss = await steadyRss(agent.child.pid!);
    const inCloud = JSON.parse(kubectl(['-n', PODS_NS, 'get', 'pods', '-o', 'json'])) as { items: Pod[] };
    const runningInCloud = inCloud.items.filter((p) => p.status?.phase === 'Running').length;
    await agent.stop();

    const delta = new Map<string, number>();
    for (const [k, v] of after) if (v - (before.get(k) ?? 0) > 0) delta.set(k, v - (before.get(k) ?? 0));
    // What a node does for its pods (the admin's POSTs of pods and the node's own Lease, node
    // status and events apart).
    const perPod = [...delta].filter(
      ([k]) => /^\w+ (pods|serviceaccounts\/token|configmaps|secrets)(\/|$)/.test(k) && k !== 'POST pods',
    );
    const podRequests = perPod.reduce((a, [, v]) => a + v, 0);
    console.log(
      `\n${PODS} pods (busybox sleep, host network) on containerd (lab), ${runningInCloud} Running in the cloud\n`,
    );
    printTable(
      ['what', 'Outpost --cloud', 'anchor', 'ratio'],
      [
        [
          `agent RSS, ${PODS} pods running (MB)`,
          cloudRss.toFixed(1),
          `${standaloneRss.toFixed(1)} (same pods from manifests)`,
          (cloudRss / standaloneRss).toFixed(2),
        ],
        [
          'node requests per pod started (events apart)',
          (podRequests / PODS).toFixed(2),
          '6 (fleet budget)',
          (podRequests / PODS / 6).toFixed(2),
        ],
      ],
    );
    console.log('\nrequests in the window (apiserver_request_total deltas):');
    printTable(
      ['verb resource', 'requests', 'counted per pod'],
      [...delta]
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => [k, String(v), perPod.some(([p]) => p === k) ? 'yes' : '-']),
    );
  } finally {
    await removePods().catch(() => {});
    cri.close();
    rmSync(work, { recursive: true, force: true });
    if (!process.env.BENCH_KEEP_LAB) await stopLab({ dir: LAB_DIR, log: () => {} });
  }
}
