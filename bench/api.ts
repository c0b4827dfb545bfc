// npm run bench:api — the offline read path: 1,000 pods in the metabase, served by the bundled agent.
// Every Outpost figure is printed next to its anchor measured in this same run: a raw better-sqlite3
// read of the same rows (JSON.parse included) in one process for GET and LIST; for a watch, the
// same client's GET round trip and an in-process listener of the same write; for 100 watchers, a
// bare node:http server holding 100 chunked answers open. Every part runs BENCH_ROUNDS times
// (default 3), Outpost's rounds and its anchor's in turn; each figure is printed as median (min-max)
// over the rounds, and each ratio is taken per round before it is summarized. Every agent and bare
// server starts on a port the kernel found free; one that exits because another process took the
// port meanwhile (exit code 4, ListenFailed) starts again on another, up to 5 ports (onFreePort).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { type ClientRequest, get, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { openMetabase } from '#db/open.ts';
import { createApp } from '#lib/app.ts';
import type { Pod } from '#lib/kube/types.ts';
import { silentLogger } from '#lib/log.ts';
import { WriteBatch } from '#lib/pods/worker/write-batch.ts';
import { listen } from '#lib/server.ts';
import { createStore } from '#lib/store/index.ts';
import { ExitCode } from '#lib/supervisor/exit-codes.ts';
import { onFreePort } from '../test/helpers/outpost-process.ts';
import {
  AGENT_SETTINGS,
  agentEnv,
  load,
  median,
  NODE_FLAGS,
  offlineServeArgs,
  printTable,
  rssMb,
  type Stats,
  serviceEnv,
  spread,
  startAndWait,
  stats,
  stopChild,
  timeSync,
} from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PODS = Number(process.env.BENCH_PODS ?? 1000);
const GETS = Number(process.env.BENCH_GETS ?? 20000);
const LISTS = Number(process.env.BENCH_LISTS ?? 200);
const WATCH_WRITES = Number(process.env.BENCH_WATCH_WRITES ?? 500);
const WATCHERS = Number(process.env.BENCH_WATCHERS ?? 100);
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
  if (q.method === 'POST') { for (const h of held) h.write('{"type":"MODIFIED","object":{}}\\n'); return s.end('fired'); }
  s.writeHead(200, { 'content-type': 'application/json' }); s.write(''); held.push(s);
}).on('error', () => process.exit(${ExitCode.ListenFailed})).listen(Number(process.argv[1]), '127.0.0.1');`;

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
}).on('error', () => process.exit(${ExitCode.ListenFailed})).listen(port, '127.0.0.1');`;

/** One round of reads over HTTP: GET on 4 and 16 connections, LIST as JSON (and Table) on one. */
interface Reads {
  get: Stats;
  getMax: Stats;
  list: Stats;
  table?: Stats;
}

/** The same reads against any server: `getPath` and `listPath` on `url`. */
async function reads(url: string, getPath: string, listPath: string, table: boolean): Promise<Reads> {
  return {
    get: await load(url, getPath, GETS, 4),
    getMax: await load(url, getPath, GETS, 16),
    list: await load(url, listPath, LISTS, 1),
    ...(table
      ? {
          table: await load(url, listPath, LISTS, 1, {
            accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
          }),
        }
      : {}),
  };
}

/**
 * The bare watch server on `port`, once it answers `POST /fire` with its `fired` (a GET would be
 * held as a watcher; another process on the port answers otherwise). One that exits first (its
 * port taken: code 4) rejects with its exit code, for onFreePort.
 */
async function startBareWatch(port: number): Promise<{ child: ChildProcess; url: string }> {
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['-e', BARE_WATCH_SERVER, String(port)], {
    stdio: 'inherit',
    env: serviceEnv,
  });
  for (;;) {
    const fired = await fetch(`${url}/fire`, { method: 'POST', signal: AbortSignal.timeout(5000) }).then(
      async (r) => (await r.text()) === 'fired',
      () => false,
    );
    if (fired) return { child, url };
    if (child.exitCode !== null)
      throw Object.assign(new Error(`the bare watch server exited with ${child.exitCode}`), {
        exitCode: child.exitCode,
      });
    await sleep(20);
  }
}

/**
 * The bundled agent serving the seeded metabase offline, on a free port, once GET `path` answers.
 * No container runtime here: this measures the offline read path, so the runtime and pods modules
 * back off quietly while reads are served (the agent is never "ready", by design).
 */
const startAgent = (path: string) =>
  onFreePort('bench agent', async (port) => {
    const url = `http://127.0.0.1:${port}`;
    const args = [...NODE_FLAGS, ...offlineServeArgs('dist/outpost.cjs', port, dir, 'silent')];
    return { ...(await startAndWait(process.execPath, args, url, path, agentEnv)), url };
  });

async function bareWatchersCost(n: number): Promise<WatchersCost> {
  const { child, url } = await onFreePort('bench bare watch server', startBareWatch);
  try {
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

/** Outpost's watchers cost on a fresh agent, idle but for one read and one write. */
async function agentWatchersCost(): Promise<WatchersCost> {
  // Fresh: what the read load left for the GC to collect would otherwise drown the watchers' cost.
  const fresh = await startAgent('/api/v1/pods?limit=1');
  const { url } = fresh;
  const kill = () => fresh.child.kill();
  process.once('exit', kill); // also when a step below fails
  try {
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
    return await watchersCost(
      fresh.child.pid!,
      url,
      `/api/v1/pods?watch=1&resourceVersion=${list.metadata.resourceVersion}`,
      WATCHERS,
      () => patchStatus('fired'),
      '"fired"',
    );
  } finally {
    await stopChild(fresh.child);
    process.off('exit', kill);
  }
}

const met = (ok: boolean) => (ok ? 'met' : 'NOT met');

/** The raw better-sqlite3 anchor and Outpost's handlers in this process (no sockets), one round. */
async function inProcessReads() {
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
  return { rawGet: rawGet.p50, rawList: rawList.p50, inGet: median(inGet), inList: median(inList) };
}

async function main() {
  const startLoad = loadavg()[0]!;
  console.log(`seeding ${PODS} pods ...`);
  seed();

  const inProcess: Awaited<ReturnType<typeof inProcessReads>>[] = [];
  for (let r = 0; r < ROUNDS; r++) inProcess.push(await inProcessReads());

  console.log(`watch latency: ${ROUNDS} rounds of ${WATCH_WRITES} status writes ...`);
  const latencies: Awaited<ReturnType<typeof watchLatency>>[] = [];
  for (let r = 0; r < ROUNDS; r++) latencies.push(await watchLatency());

  // The bundled agent as it runs in production, over HTTP, and beside it the bare server answering
  // the same bytes: both kept running, their rounds interleaved so both see the same machine.
  console.log(`reads: ${ROUNDS} rounds, Outpost and the bare server in turn ...`);
  const getPath = '/api/v1/namespaces/ns-7/pods/pod-0007';
  const { child, readyMs, url } = await startAgent(getPath);
  const killAgent = () => child.kill();
  process.once('exit', killAgent); // also when a step below fails
  const idleRss = rssMb(child.pid!);
  const getBytes = (await (await fetch(url + getPath)).arrayBuffer()).byteLength;
  const listBytes = (await (await fetch(`${url}/api/v1/pods`)).arrayBuffer()).byteLength;
  const bareServer = await onFreePort('bench bare server', async (port) => {
    const bareUrl = `http://127.0.0.1:${port}`;
    const args = ['-e', BARE_READ_SERVER, String(port), String(getBytes), String(listBytes)];
    return { ...(await startAndWait(process.execPath, args, bareUrl, '/get', serviceEnv)), bareUrl };
  });
  const { bareUrl } = bareServer;
  const outpostReads: Reads[] = [];
  const bareRounds: Reads[] = [];
  try {
    await load(url, getPath, 2000, 8); // warm-up
    await load(bareUrl, '/get', 2000, 8);
    for (let r = 0; r < ROUNDS; r++) {
      outpostReads.push(await reads(url, getPath, '/api/v1/pods', true));
      bareRounds.push(await reads(bareUrl, '/get', '/list', false));
    }
  } finally {
    await stopChild(bareServer.child);
  }
  const loadedRss = rssMb(child.pid!);
  await stopChild(child);
  process.off('exit', killAgent);

  console.log(`${WATCHERS} watchers: ${ROUNDS} rounds, Outpost and a bare server in turn ...`);
  const watchers: WatchersCost[] = [];
  const bareWatchers: WatchersCost[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    watchers.push(await agentWatchersCost());
    bareWatchers.push(await bareWatchersCost(WATCHERS));
  }
  rmSync(dir, { recursive: true, force: true });

  // Each cell: median (min-max) over the rounds; a ratio is taken per round, then summarized.
  const per = <T>(xs: T[], f: (x: T, i: number) => number, d = 2) => spread(xs.map(f), d);
  const midOf = <T>(xs: T[], f: (x: T) => number) => median(xs.map(f));
  console.log(
    `\nOutpost read path, ${PODS} pods, node ${process.version} (${AGENT_SETTINGS}), ${new Date().toISOString()}, load (1 min) ${startLoad.toFixed(1)} at start, ${loadavg()[0]!.toFixed(1)} at end; median (min-max) of ${ROUNDS} rounds, ratios per round\n`,
  );
  const readRow = (what: string, pick: (r: Reads) => Stats | undefined, hasBare = true) => {
    const o = (r: Reads) => pick(r)!;
    return [
      what,
      per(outpostReads, (r) => o(r).p50),
      per(outpostReads, (r) => o(r).p99),
      per(outpostReads, (r) => o(r).perSecond, 0),
      hasBare ? `${per(bareRounds, (r) => o(r).p50)} / ${per(bareRounds, (r) => o(r).p99)}` : '-',
      hasBare ? per(outpostReads, (r, i) => o(r).p99 / o(bareRounds[i]!).p99) : '-',
    ];
  };
  // Outpost's handler in this process beside the raw read of the same rows, same round.
  const inProcessRow = (
    what: string,
    mine: 'inGet' | 'inList',
    raw: 'rawGet' | 'rawList',
    target: string,
  ) => [
    what,
    per(inProcess, (p) => p[mine]),
    '-',
    '-',
    '-',
    '-',
    per(inProcess, (p) => p[raw]),
    per(inProcess, (p) => p[mine] / p[raw]),
    target,
  ];
  const rawRatio = (f: (r: Reads) => Stats | undefined, raw: 'rawGet' | 'rawList') => [
    per(inProcess, (p) => p[raw]),
    per(outpostReads, (r, i) => f(r)!.p50 / inProcess[i % inProcess.length]![raw]),
  ];
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
        ...readRow('GET one pod (HTTP, 4 conns)', (r) => r.get),
        ...rawRatio((r) => r.get, 'rawGet'),
        `p99 <= 2 ms: ${met(midOf(outpostReads, (r) => r.get.p99) <= 2)}`,
      ],
      [
        ...readRow('GET one pod (HTTP, 16 conns)', (r) => r.getMax),
        ...rawRatio((r) => r.getMax, 'rawGet'),
        `>= 3000 req/s: ${met(midOf(outpostReads, (r) => r.getMax.perSecond) >= 3000)}`,
      ],
      [
        ...readRow(`LIST ${PODS} pods JSON (HTTP)`, (r) => r.list),
        ...rawRatio((r) => r.list, 'rawList'),
        `p99 <= 30 ms: ${met(midOf(outpostReads, (r) => r.list.p99) <= 30)}`,
      ],
      [
        ...readRow(`LIST ${PODS} pods Table (HTTP)`, (r) => r.table, false),
        ...rawRatio((r) => r.table, 'rawList'),
        '-',
      ],
      inProcessRow('GET one pod (in-process handler)', 'inGet', 'rawGet', '-'),
      inProcessRow(
        `LIST ${PODS} pods (in-process handler)`,
        'inList',
        'rawList',
        `<= 3 x raw: ${met(midOf(inProcess, (p) => p.inList / p.rawList) <= 3)}`,
      ),
    ],
  );
  console.log(`\nWatch: status write (WriteBatch -> PodStore.setStatus, committed) -> event at a node:http`);
  console.log(
    `client in its own process (?watch=1), ${WATCH_WRITES} writes one at a time per round, Outpost's server in process\n`,
  );
  printTable(
    ['what', 'p50 ms', 'p99 ms', 'max ms', 'anchor', 'anchor p50 ms', 'anchor p99 ms', 'ratio p99', 'target'],
    [
      [
        'write -> watch event at the client',
        per(latencies, (l) => l.watch.p50),
        per(latencies, (l) => l.watch.p99),
        per(latencies, (l) => l.watch.max),
        "same client's GET round trip",
        per(latencies, (l) => l.get.p50),
        per(latencies, (l) => l.get.p99),
        per(latencies, (l) => l.watch.p99 / l.get.p99),
        `p99 <= 10 ms: ${met(midOf(latencies, (l) => l.watch.p99) <= 10)}`,
      ],
      [
        'write -> in-process listener (committed)',
        per(latencies, (l) => l.inProcess.p50),
        per(latencies, (l) => l.inProcess.p99),
        per(latencies, (l) => l.inProcess.max),
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
  const grown = (w: WatchersCost, at: 'open' | 'delivered') => w[at] - w.before;
  const watchRow = (what: string, at: 'open' | 'delivered') => [
    what,
    per(watchers, (w) => w[at]),
    per(watchers, (w) => perWatcherKb(w, w[at])),
    per(bareWatchers, (w) => w[at]),
    per(bareWatchers, (w) => perWatcherKb(w, w[at])),
    per(watchers, (w, i) => grown(w, at) / grown(bareWatchers[i]!, at)),
    `+ <= 10 MB: ${met(midOf(watchers, (w) => grown(w, at)) <= 10)}`,
  ];
  printTable(
    ['what', 'Outpost MB', 'per watcher KB', 'bare node:http MB', 'per conn KB', 'ratio', 'target'],
    [
      ['RSS before', per(watchers, (w) => w.before), '-', per(bareWatchers, (w) => w.before), '-', '-', '-'],
      watchRow(`RSS, ${WATCHERS} watches open, idle`, 'open'),
      watchRow('RSS, one event delivered to all', 'delivered'),
      [
        'PATCH status -> event at the last watcher (ms)',
        per(watchers, (w) => w.fanOutMs),
        '-',
        per(bareWatchers, (w) => w.fanOutMs),
        '-',
        per(watchers, (w, i) => w.fanOutMs / bareWatchers[i]!.fanOutMs),
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
      [`RSS after load, ${PODS} pods (MB)`, loadedRss.toFixed(1), 'edgecore 67.5 at 20 pods', '-'],
    ],
  );
}

await main();
