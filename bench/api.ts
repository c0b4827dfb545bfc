// npm run bench:api — the offline read path: 1,000 pods in the metabase, served by the bundled agent.
// Every Outpost figure is printed next to its anchor measured in this same run: a raw better-sqlite3
// read of the same rows (JSON.parse included) in one process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openMetabase } from '#db/open.ts';
import { createApp } from '#lib/app.ts';
import type { Pod } from '#lib/kube/types.ts';
import { silentLogger } from '#lib/log.ts';
import { createStore } from '#lib/store/index.ts';
import { load, offlineServeArgs, printTable, rssMb, startAndWait, stopChild, timeSync } from './lib.ts';

const PODS = Number(process.env.BENCH_PODS ?? 1000);
const GETS = Number(process.env.BENCH_GETS ?? 20000);
const LISTS = Number(process.env.BENCH_LISTS ?? 200);
const PORT = 20000 + (process.pid % 20000);
const dir = mkdtempSync(join(tmpdir(), 'outpost-bench-'));

function seed(): void {
  const mb = openMetabase(dir);
  const store = createStore(mb, { host: 'bench' });
  mb.sqlite.transaction(() => {
    for (let i = 0; i < PODS; i++) {
      const pod: Pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `pod-${String(i).padStart(4, '0')}`,
          namespace: `ns-${i % 10}`,
          labels: { app: `app-${i % 50}`, tier: 'edge' },
        },
        spec: {
          nodeName: 'bench',
          restartPolicy: 'Always',
          containers: [
            { name: 'main', image: 'outpost.local/busybox:latest', command: ['sleep', 'infinity'] },
          ],
        },
      };
      store.pods.put(pod, 'api');
      const uid = store.pods.record(pod.metadata.namespace!, pod.metadata.name!)!.uid;
      store.pods.setStatus(uid, {
        phase: 'Running',
        podIP: '10.0.0.1',
        hostIP: '10.0.0.1',
        startTime: new Date().toISOString(),
        conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map((type) => ({
          type,
          status: 'True' as const,
        })),
        containerStatuses: [
          {
            name: 'main',
            ready: true,
            started: true,
            restartCount: 0,
            image: 'outpost.local/busybox:latest',
            imageID: 'sha256:1',
            containerID: 'containerd://1',
            state: { running: { startedAt: new Date().toISOString() } },
          },
        ],
      });
    }
  })();
  mb.close();
}

async function main() {
  console.log(`seeding ${PODS} pods ...`);
  seed();

  // Anchor: raw better-sqlite3 reads of the same rows in this process.
  const raw = new Database(join(dir, 'outpost.db'), { readonly: true });
  const one = raw.prepare(
    'SELECT p.object, s.patch FROM pods p LEFT JOIN pod_status s ON s.uid = p.uid WHERE p.namespace = ? AND p.name = ?',
  );
  const all = raw.prepare(
    'SELECT p.object, s.patch FROM pods p LEFT JOIN pod_status s ON s.uid = p.uid ORDER BY p.namespace, p.name',
  );
  const rawGet = timeSync(GETS, () => {
    const r = one.get('ns-7', 'pod-0007') as { object: string; patch: string };
    JSON.parse(r.object);
    JSON.parse(r.patch);
  });
  const rawList = timeSync(LISTS, () => {
    for (const r of all.all() as { object: string; patch: string }[]) {
      JSON.parse(r.object);
      JSON.parse(r.patch);
    }
  });
  raw.close();

  // Outpost's own handlers in this process (no sockets): what the read path costs over the raw read.
  const mb = openMetabase(dir);
  const store = createStore(mb, { host: 'bench' });
  const app = createApp({
    store,
    log: silentLogger,
    now: Date.now,
    nodeName: 'bench',
    shutdown: new AbortController().signal,
    health: () => [],
  });
  const inGet: number[] = [];
  const inList: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const t = performance.now();
    await (await app.request('/api/v1/namespaces/ns-7/pods/pod-0007')).arrayBuffer();
    inGet.push(performance.now() - t);
  }
  for (let i = 0; i < LISTS; i++) {
    const t = performance.now();
    await (await app.request('/api/v1/pods')).arrayBuffer();
    inList.push(performance.now() - t);
  }
  mb.close();
  const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;

  // The bundled agent as it runs in production, over HTTP.
  const url = `http://127.0.0.1:${PORT}`;
  const { child, readyMs } = await startAndWait(
    process.execPath,
    // No container runtime here: this measures the offline read path, so the runtime and pods
    // modules back off quietly while reads are served (the agent is never "ready", by design).
    offlineServeArgs('dist/outpost.mjs', PORT, dir, 'silent'),
    url,
    '/api/v1/namespaces/ns-7/pods/pod-0007',
  );
  const idleRss = rssMb(child.pid!);
  await load(url, '/api/v1/namespaces/ns-7/pods/pod-0007', 2000, 8); // warm-up
  const httpGet = await load(url, '/api/v1/namespaces/ns-7/pods/pod-0007', GETS, 4);
  const httpGetMax = await load(url, '/api/v1/namespaces/ns-7/pods/pod-0007', GETS, 16);
  const httpList = await load(url, '/api/v1/pods', LISTS, 1);
  const httpTable = await load(url, '/api/v1/pods', LISTS, 1, {
    accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
  });
  const loadedRss = rssMb(child.pid!);
  await stopChild(child);
  rmSync(dir, { recursive: true, force: true });

  console.log(`\nOutpost read path, ${PODS} pods, node ${process.version}, ${new Date().toISOString()}\n`);
  printTable(
    ['what', 'p50 ms', 'p99 ms', 'req/s', 'anchor p50 ms', 'ratio p50', 'target'],
    [
      [
        'GET one pod (HTTP, 4 conns)',
        httpGet.p50,
        httpGet.p99,
        httpGet.perSecond.toFixed(0),
        rawGet.p50,
        httpGet.p50 / rawGet.p50,
        'p99 <= 5 ms',
      ],
      [
        'GET one pod (HTTP, 16 conns)',
        httpGetMax.p50,
        httpGetMax.p99,
        httpGetMax.perSecond.toFixed(0),
        rawGet.p50,
        httpGetMax.p50 / rawGet.p50,
        '>= 3000 req/s',
      ],
      [
        `LIST ${PODS} pods JSON (HTTP)`,
        httpList.p50,
        httpList.p99,
        httpList.perSecond.toFixed(0),
        rawList.p50,
        httpList.p50 / rawList.p50,
        'p99 <= 50 ms',
      ],
      [
        `LIST ${PODS} pods Table (HTTP)`,
        httpTable.p50,
        httpTable.p99,
        httpTable.perSecond.toFixed(0),
        rawList.p50,
        httpTable.p50 / rawList.p50,
        '-',
      ],
      ['GET one pod (in-process handler)', med(inGet), '-', '-', rawGet.p50, med(inGet) / rawGet.p50, '-'],
      [
        `LIST ${PODS} pods (in-process handler)`,
        med(inList),
        '-',
        '-',
        rawList.p50,
        med(inList) / rawList.p50,
        '<= 3 x raw',
      ],
    ],
  );
  console.log('');
  printTable(
    ['what', 'Outpost', 'anchor', 'target'],
    [
      ['start -> first served request (ms)', readyMs.toFixed(0), 'kubelet 9500, YurtHub 2500', '<= 300'],
      ['RSS idle (MB)', idleRss.toFixed(1), 'YurtHub 35-40 (cache only)', '-'],
      [
        `RSS after load, ${PODS} pods (MB)`,
        loadedRss.toFixed(1),
        'edgecore 67.5 at 20 pods',
        '<= 50 at 20 pods',
      ],
    ],
  );
}

await main();
