// npm run bench:api — the offline read path: 1,000 pods in the metabase, served by the bundled agent.
// Every Outpost figure is printed next to its anchor measured in this same run: a raw better-sqlite3
// read of the same rows (JSON.parse included) in one process for GET and LIST; for a watch, the
// same client's GET round trip and an in-process listener of the same write; for 100 watchers, a
// bare node:http server holding 100 chunked answers open.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { type ClientRequest, get, request } from 'node:http';
import { createInterface } from 'node:readline';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openMetabase } from '#db/open.ts';
import { createApp } from '#lib/app.ts';
import type { Pod } from '#lib/kube/types.ts';
import { silentLogger } from '#lib/log.ts';
import { WriteBatch } from '#lib/pods/worker/write-batch.ts';
import { listen } from '#lib/server.ts';
import { createStore } from '#lib/store/index.ts';
import {
  load,
  offlineServeArgs,
  printTable,
  rssMb,
  type Stats,
  startAndWait,
  stats,
  stopChild,
  timeSync,
} from './lib.ts';

const PODS = Number(process.env.BENCH_PODS ?? 1000);
const GETS = Number(process.env.BENCH_GETS ?? 20000);
const LISTS = Number(process.env.BENCH_LISTS ?? 200);
const WATCH_WRITES = Number(process.env.BENCH_WATCH_WRITES ?? 500);
const WATCHERS = Number(process.env.BENCH_WATCHERS ?? 100);
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hrMs = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e6;

/**
 * Watch latency on Outpost's own server (lib/app.ts + lib/server.ts, in this process): a pod's
 * status is written the way the pod worker commits it (a WriteBatch of PodStore.setStatus, so the
 * commit's fsync is included), one write at a time, and a plain node:http watch client in its own
 * process stamps each event's arrival. Anchors: an in-process hub listener of the same write (once
 * its transaction committed) and the same client's GET round trip.
 */
async function watchLatency(): Promise<{ watch: Stats; inProcess: Stats; get: Stats }> {
  const mb = openMetabase(dir);
  const store = createStore(mb, { host: 'bench' });
  const shutdown = new AbortController();
  const app = createApp({
    store,
    log: silentLogger,
    now: Date.now,
    nodeName: 'bench',
    shutdown: shutdown.signal,
    health: () => [],
  });
  const server = await listen(app, '127.0.0.1', 0);
  const writes = new WriteBatch(mb.sqlite, (err) => {
    throw err;
  });
  const uid = store.pods.record('ns-7', 'pod-0007')!.uid;
  const base = store.pods.get('ns-7', 'pod-0007')!.status!;
  const client = spawn(
    process.execPath,
    [join(import.meta.dirname, 'watch-client.mjs'), server.url, String(store.rv.current)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: client.stdout! })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => {
    const r = await lines.next();
    if (r.done) throw new Error('the watch client ended');
    return r.value as string;
  };
  try {
    if ((await next()) !== 'WATCHING') throw new Error('the watch client did not start');
    let t0 = 0n;
    const inProcess: number[] = [];
    // Inside the write's transaction; the microtask runs once it committed, as the client's stream does.
    const unsubscribe = store.hub.subscribe('pods', store.rv.current, () =>
      queueMicrotask(() => inProcess.push(hrMs(t0))),
    );
    const watch: number[] = [];
    const started = performance.now();
    for (let i = 0; i < WATCH_WRITES; i++) {
      await sleep(2);
      t0 = process.hrtime.bigint();
      const status = { ...base, message: `t=${t0}` };
      writes.add(() => store.pods.setStatus(uid, status));
      const line = await next();
      if (!line.startsWith('W ')) throw new Error(`unexpected from the watch client: ${line}`);
      watch.push(Number(line.slice(2)));
    }
    const wall = performance.now() - started;
    unsubscribe();
    client.stdin!.write(`G ${WATCH_WRITES}\n`);
    const gets: number[] = [];
    for (let line = await next(); line !== 'GDONE'; line = await next()) gets.push(Number(line.slice(2)));
    return { watch: stats(watch, wall), inProcess: stats(inProcess, wall), get: stats(gets, wall) };
  } finally {
    shutdown.abort();
    await stopChild(client);
    await server.close();
    mb.close();
  }
}

/** The median of 5 RSS samples of `pid` over 2.5 s, once 1 s has passed (a GC may land in between). */
async function settledRss(pid: number): Promise<number> {
  await sleep(1000);
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    await sleep(500);
    samples.push(rssMb(pid));
  }
  return samples.sort((a, b) => a - b)[2]!;
}

interface WatchersCost {
  /** RSS in MB before, with the watchers open and idle, and once one event reached all of them. */
  before: number;
  open: number;
  delivered: number;
  /** From the write's request to the event's arrival at the last watcher. */
  fanOutMs: number;
}

/**
 * Opens `n` watch connections to `url + path` (each its own socket, as n kubectl processes would),
 * lets them idle, then `fire`s one event and waits until every watcher received a line with
 * `marker`; samples the server's RSS (`pid`) at each step.
 */
async function watchersCost(
  pid: number,
  url: string,
  path: string,
  n: number,
  fire: () => Promise<void>,
  marker: string,
): Promise<WatchersCost> {
  // One watch opened and closed first: code loaded on first use (the bundle's chunks) is not the watchers' cost.
  await new Promise<void>((resolve, reject) => {
    const req = get(`${url}${path}`, { agent: false }, (res) => {
      res.resume();
      req.destroy();
      resolve();
    });
    req.on('error', reject);
  });
  const before = await settledRss(pid);
  const got = new Array<boolean>(n).fill(false);
  let pending = n;
  let allGot: () => void = () => {};
  const delivered = new Promise<void>((r) => (allGot = r));
  const reqs: ClientRequest[] = [];
  await Promise.all(
    Array.from(
      { length: n },
      (_, i) =>
        new Promise<void>((resolve, reject) => {
          const req = get(`${url}${path}`, { agent: false }, (res) => {
            if (res.statusCode !== 200) reject(new Error(`watch ${i}: HTTP ${res.statusCode}`));
            let buf = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              buf += chunk;
              if (!got[i] && buf.includes(marker)) {
                got[i] = true;
                if (--pending === 0) allGot();
              }
              if (buf.length > 1 << 16) buf = buf.slice(-1024);
            });
            res.on('error', () => {});
            resolve();
          });
          req.on('error', reject);
          reqs.push(req);
        }),
    ),
  );
  const open = await settledRss(pid);
  const t = performance.now();
  await fire();
  await delivered;
  const fanOutMs = performance.now() - t;
  const after = await settledRss(pid);
  for (const r of reqs) r.destroy();
  return { before, open, delivered: after, fanOutMs };
}

/**
 * A PATCH (merge patch) of one pod's status message, through the agent's local admin socket
 * (anonymous TCP callers are viewers): a MODIFIED event to every pods watcher.
 */
function patchStatus(message: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath: join(dir, 'outpost.sock'),
        path: '/api/v1/namespaces/ns-7/pods/pod-0007/status',
        method: 'PATCH',
        headers: { 'content-type': 'application/merge-patch+json' },
      },
      (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`PATCH: HTTP ${res.statusCode} ${body}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ status: { message } }));
  });
}

/**
 * The anchor for watchers: a bare node:http server that holds every request open as a chunked
 * JSON answer and writes one line to all of them on `POST /fire`.
 */
const BARE_WATCH_SERVER = `
const held = [];
require('node:http').createServer((q, s) => {
  if (q.method === 'POST') { for (const h of held) h.write('{"type":"MODIFIED","object":{}}\\n'); return s.end(); }
  s.writeHead(200, { 'content-type': 'application/json' }); s.write(''); held.push(s);
}).listen(Number(process.argv[1]), '127.0.0.1');`;

/**
 * The HTTP floor for reads: a bare node:http server answering `/get` and `/list` with fixed JSON
 * bodies of the same sizes as Outpost's answers (given in bytes on its command line).
 */
const BARE_READ_SERVER = `
const [port, getBytes, listBytes] = process.argv.slice(1).map(Number);
const body = (n) => Buffer.from(JSON.stringify({ pad: 'x'.repeat(Math.max(0, n - 10)) }));
const bodies = { '/get': body(getBytes), '/list': body(listBytes) };
require('node:http').createServer((q, s) => {
  const b = bodies[q.url];
  s.writeHead(200, { 'content-type': 'application/json', 'content-length': b.length }); s.end(b);
}).listen(port, '127.0.0.1');`;

/** GET (4 and 16 connections) and LIST (1 connection) against the bare server, as against Outpost. */
async function bareReads(getBytes: number, listBytes: number) {
  const port = PORT + 2;
  const url = `http://127.0.0.1:${port}`;
  const { child } = await startAndWait(
    process.execPath,
    ['-e', BARE_READ_SERVER, String(port), String(getBytes), String(listBytes)],
    url,
    '/get',
  );
  try {
    await load(url, '/get', 2000, 8); // warm-up, as for Outpost
    return {
      get: await load(url, '/get', GETS, 4),
      getMax: await load(url, '/get', GETS, 16),
      list: await load(url, '/list', LISTS, 1),
    };
  } finally {
    await stopChild(child);
  }
}

async function bareWatchersCost(n: number): Promise<WatchersCost> {
  const port = PORT + 1;
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['-e', BARE_WATCH_SERVER, String(port)], { stdio: 'inherit' });
  try {
    for (;;) {
      try {
        await fetch(`${url}/fire`, { method: 'POST' });
        break;
      } catch {
        await sleep(20);
      }
    }
    return await watchersCost(
      child.pid!,
      url,
      '/watch',
      n,
      async () => void (await fetch(`${url}/fire`, { method: 'POST' })),
      'MODIFIED',
    );
  } finally {
    await stopChild(child);
  }
}

const met = (ok: boolean) => (ok ? 'met' : 'NOT met');

async function main() {
  const startLoad = loadavg()[0]!;
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

  console.log(`watch latency: ${WATCH_WRITES} status writes ...`);
  const lat = await watchLatency();

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
  process.once('exit', () => child.kill()); // also when a step below fails
  const idleRss = rssMb(child.pid!);
  await load(url, '/api/v1/namespaces/ns-7/pods/pod-0007', 2000, 8); // warm-up
  const httpGet = await load(url, '/api/v1/namespaces/ns-7/pods/pod-0007', GETS, 4);
  const httpGetMax = await load(url, '/api/v1/namespaces/ns-7/pods/pod-0007', GETS, 16);
  const httpList = await load(url, '/api/v1/pods', LISTS, 1);
  const httpTable = await load(url, '/api/v1/pods', LISTS, 1, {
    accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
  });
  const loadedRss = rssMb(child.pid!);
  const getBytes = (await (await fetch(`${url}/api/v1/namespaces/ns-7/pods/pod-0007`)).arrayBuffer())
    .byteLength;
  const listBytes = (await (await fetch(`${url}/api/v1/pods`)).arrayBuffer()).byteLength;
  await stopChild(child);
  const bareRead = await bareReads(getBytes, listBytes);

  // Watchers on a fresh agent, idle but for one read: what the load above left for the GC to
  // collect would otherwise drown the watchers' cost.
  console.log(`${WATCHERS} watchers ...`);
  const fresh = await startAndWait(
    process.execPath,
    offlineServeArgs('dist/outpost.mjs', PORT, dir, 'silent'),
    url,
    '/api/v1/pods?limit=1',
  );
  process.once('exit', () => fresh.child.kill());
  // The write path's modules load on first use; the admin socket may open after the first read.
  for (let tries = 0; ; tries++) {
    try {
      await patchStatus('warm-up');
      break;
    } catch (e) {
      if (tries > 300) throw e;
      await sleep(100);
    }
  }
  const list = (await (await fetch(`${url}/api/v1/pods?limit=1`)).json()) as {
    metadata: { resourceVersion: string };
  };
  const watchers = await watchersCost(
    fresh.child.pid!,
    url,
    `/api/v1/pods?watch=1&resourceVersion=${list.metadata.resourceVersion}`,
    WATCHERS,
    () => patchStatus('fired'),
    '"fired"',
  );
  await stopChild(fresh.child);
  rmSync(dir, { recursive: true, force: true });
  const bare = await bareWatchersCost(WATCHERS);

  console.log(
    `\nOutpost read path, ${PODS} pods, node ${process.version}, ${new Date().toISOString()}, load (1 min) ${startLoad.toFixed(1)} at start, ${loadavg()[0]!.toFixed(1)} at end\n`,
  );
  printTable(
    [
      'what',
      'p50 ms',
      'p99 ms',
      'req/s',
      'bare node:http p50 / p99 ms (same bytes)',
      'ratio p99',
      'raw read p50 ms',
      'ratio p50',
      'target',
    ],
    [
      [
        'GET one pod (HTTP, 4 conns)',
        httpGet.p50,
        httpGet.p99,
        httpGet.perSecond.toFixed(0),
        `${bareRead.get.p50.toFixed(2)} / ${bareRead.get.p99.toFixed(2)}`,
        httpGet.p99 / bareRead.get.p99,
        rawGet.p50,
        httpGet.p50 / rawGet.p50,
        `p99 <= 2 ms: ${met(httpGet.p99 <= 2)}`,
      ],
      [
        'GET one pod (HTTP, 16 conns)',
        httpGetMax.p50,
        httpGetMax.p99,
        httpGetMax.perSecond.toFixed(0),
        `${bareRead.getMax.p50.toFixed(2)} / ${bareRead.getMax.p99.toFixed(2)}`,
        httpGetMax.p99 / bareRead.getMax.p99,
        rawGet.p50,
        httpGetMax.p50 / rawGet.p50,
        `>= 3000 req/s: ${met(httpGetMax.perSecond >= 3000)}`,
      ],
      [
        `LIST ${PODS} pods JSON (HTTP)`,
        httpList.p50,
        httpList.p99,
        httpList.perSecond.toFixed(0),
        `${bareRead.list.p50.toFixed(2)} / ${bareRead.list.p99.toFixed(2)}`,
        httpList.p99 / bareRead.list.p99,
        rawList.p50,
        httpList.p50 / rawList.p50,
        `p99 <= 30 ms: ${met(httpList.p99 <= 30)}`,
      ],
      [
        `LIST ${PODS} pods Table (HTTP)`,
        httpTable.p50,
        httpTable.p99,
        httpTable.perSecond.toFixed(0),
        '-',
        '-',
        rawList.p50,
        httpTable.p50 / rawList.p50,
        '-',
      ],
      [
        'GET one pod (in-process handler)',
        med(inGet),
        '-',
        '-',
        '-',
        '-',
        rawGet.p50,
        med(inGet) / rawGet.p50,
        '-',
      ],
      [
        `LIST ${PODS} pods (in-process handler)`,
        med(inList),
        '-',
        '-',
        '-',
        '-',
        rawList.p50,
        med(inList) / rawList.p50,
        `<= 3 x raw: ${met(med(inList) <= 3 * rawList.p50)}`,
      ],
    ],
  );
  console.log(`\nWatch: status write (WriteBatch -> PodStore.setStatus, committed) -> event at a node:http`);
  console.log(
    `client in its own process (?watch=1), ${WATCH_WRITES} writes one at a time, Outpost's server in process\n`,
  );
  printTable(
    ['what', 'p50 ms', 'p99 ms', 'max ms', 'anchor', 'anchor p50 ms', 'anchor p99 ms', 'ratio p99', 'target'],
    [
      [
        'write -> watch event at the client',
        lat.watch.p50,
        lat.watch.p99,
        lat.watch.max,
        "same client's GET round trip",
        lat.get.p50,
        lat.get.p99,
        lat.watch.p99 / lat.get.p99,
        `p99 <= 10 ms: ${met(lat.watch.p99 <= 10)}`,
      ],
      [
        'write -> in-process listener (committed)',
        lat.inProcess.p50,
        lat.inProcess.p99,
        lat.inProcess.max,
        '-',
        '-',
        '-',
        '-',
        '-',
      ],
    ],
  );
  const perWatcherKb = (w: WatchersCost, rss: number) => ((rss - w.before) * 1024) / WATCHERS;
  console.log(
    `\n${WATCHERS} concurrent watchers of all pods (each its own connection) on a fresh agent, RSS from /proc (median of 5 samples)\n`,
  );
  printTable(
    ['what', 'Outpost MB', 'per watcher KB', 'bare node:http MB', 'per conn KB', 'ratio', 'target'],
    [
      ['RSS before', watchers.before, '-', bare.before, '-', '-', '-'],
      [
        `RSS, ${WATCHERS} watches open, idle`,
        watchers.open,
        perWatcherKb(watchers, watchers.open),
        bare.open,
        perWatcherKb(bare, bare.open),
        (watchers.open - watchers.before) / (bare.open - bare.before),
        `+ <= 10 MB: ${met(watchers.open - watchers.before <= 10)}`,
      ],
      [
        'RSS, one event delivered to all',
        watchers.delivered,
        perWatcherKb(watchers, watchers.delivered),
        bare.delivered,
        perWatcherKb(bare, bare.delivered),
        (watchers.delivered - watchers.before) / (bare.delivered - bare.before),
        `+ <= 10 MB: ${met(watchers.delivered - watchers.before <= 10)}`,
      ],
      [
        'PATCH status -> event at the last watcher (ms)',
        watchers.fanOutMs,
        '-',
        bare.fanOutMs,
        '-',
        watchers.fanOutMs / bare.fanOutMs,
        '-',
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
