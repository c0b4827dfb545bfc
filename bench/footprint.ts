// npm run bench:footprint — what the bundled agent costs a small board, each figure beside its
// anchor measured in the same run, min/median/max over rounds:
//
//   idle RSS (runtime absent, empty metabase)         vs a bare `node` HTTP server's RSS
//   RSS with 20 pods on the lab's containerd (host network, exec readiness and liveness probes, one
//   `kubectl logs -f` follower, one `kubectl get pods -A -w` watcher), then with 100 (growth 20->100)
//                                                     vs the same bare server; edgecore's published
//                                                     figures beside them
//   spawn -> first cached read (10 pods in the metabase, runtime absent)
//                                                     vs spawn -> a bare node server's first answer
//   the parts alone: a `node` process with only what the agent cannot run without (an HTTP server
//   answering GET /api/v1/pods from the metabase through better-sqlite3, one HTTP/2 connection to
//   the runtime's socket as gRPC makes, a TLS context), its RSS with the agent's settings and its
//   spawn -> first answer without V8 flags     vs the same bare server: how far the targets are
//                                                     from what Node 20 and SQLite take by themselves
//   `outpost get pods -A` (100 pods, spawn -> exit)   vs `kubectl get pods -A` (warm discovery cache)
//   `outpost --version`                               vs `node -e 1`
//
// The lab is a private one (OUTPOST_BENCH_LAB, default /tmp/outpost-lab-footprint-HASH, one per
// checkout: two checkouts' runs once shared one, and the first to end stopped the other's
// runtime). BENCH_ROUNDS (default 3) rounds of the pod phase, BENCH_SETTLE_S (default 60) seconds
// at 20 and at 100 pods before the RSS is read, BENCH_STARTS (default 10) spawns per timing row,
// OUTPOST_BUNDLE (default dist/outpost.cjs, Node's entry), BENCH_PARTS (default memory,start,cli: which groups of
// rows to measure, so work on one part can re-measure it alone). The agent runs as
// deploy/outpost.service and `outpost supervise` run it: with their V8 sizes (SMALL_BOARD_FLAGS;
// BENCH_NODE_FLAGS replaces them, empty for none) and malloc settings (SMALL_MALLOC_ENV;
// BENCH_MALLOC=glibc leaves glibc's defaults). Every agent and bare server starts on a port the
// kernel found free; one that exits because another process took the port meanwhile (the agent's
// exit code 4, ListenFailed) starts again on another, up to 5 ports, each retry said on stderr.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminKubeconfigPath } from '#lib/auth/admin.ts';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import { ExitCode } from '#lib/supervisor/exit-codes.ts';
import { startLab, stopLab } from '../scripts/lab.ts';
import { onFreePort } from '../test/helpers/outpost-process.ts';
import {
  AGENT_SETTINGS,
  agentEnv,
  cpuSeconds,
  median,
  NODE_FLAGS,
  printTable,
  rssMb,
  serviceEnv,
  spread,
  startAndWait,
  stopChild,
} from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const STARTS = Number(process.env.BENCH_STARTS ?? 10);
// How long the agent runs at 20 and at 100 pods before its RSS is read: V8's old generation grows
// to its first limits in the first minute (62-63 MB at 15 s, 68-69 MB from 60 s on, at 20 pods on the
// fake CRI: docs/performance.md), and a board's agent runs for days.
const SETTLE_MS = Number(process.env.BENCH_SETTLE_S ?? 60) * 1000;
const LAB_DIR =
  process.env.OUTPOST_BENCH_LAB ??
  `/tmp/outpost-lab-footprint-${createHash('sha256').update(process.cwd()).digest('hex').slice(0, 8)}`;
const BUNDLE = process.env.OUTPOST_BUNDLE ?? 'dist/outpost.cjs';
const PARTS = new Set((process.env.BENCH_PARTS ?? 'memory,start,cli').split(',').map((p) => p.trim()));
for (const p of PARTS)
  if (!['memory', 'start', 'cli'].includes(p))
    throw new Error(`BENCH_PARTS: ${p} is not memory, start or cli`);
// Ports the kernel hands out (a port derived from the PID once met another helper's agent), a new
// one for every start: onFreePort starts again on another port when one was taken between.
let port = 0;
const NS = 'footprint';
const NODE = 'footprint-node';
/** The running agent's API. */
let url = '';
const work = mkdtempSync(join(tmpdir(), 'outpost-bench-footprint-'));
const kubectlHome = join(work, 'kubectl-home');
mkdirSync(kubectlHome);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// A listen failure exits with the agent's code for it, so that onFreePort tries another port.
const floorScript = (p: number) =>
  `require('node:http').createServer((q, s) => s.end('ok')).on('error', () => process.exit(${ExitCode.ListenFailed})).listen(${p}, '127.0.0.1')`;

/**
 * The parts alone: what the agent cannot run without, none of its own code. An HTTP server that
 * answers GET /api/v1/pods with the metabase's pods (better-sqlite3, as the agent opens it: WAL),
 * a TLS context (the admin's HTTPS), and with `socket` one HTTP/2 connection to the runtime (what
 * gRPC opens). Listen failures exit as the agent's do.
 */
const SQLITE = createRequire(import.meta.url).resolve('better-sqlite3');
const partsScript = (p: number, db: string, socket?: string) => `
const http = require('node:http'), http2 = require('node:http2'), net = require('node:net'), tls = require('node:tls');
const db = new (require(${JSON.stringify(SQLITE)}))(${JSON.stringify(db)});
db.pragma('journal_mode = WAL');
const pods = db.prepare('select p.object as o, s.patch as s from pods p left join pod_status s on s.uid = p.uid');
tls.createSecureContext({ ca: [] });
${socket ? `http2.connect('http://localhost', { createConnection: () => net.connect(${JSON.stringify(socket)}) }).on('error', () => {});` : ''}
http.createServer((q, s) => {
  const items = pods.all().map((r) => Object.assign(JSON.parse(r.o), r.s ? { status: JSON.parse(r.s).status } : {}));
  s.setHeader('content-type', 'application/json');
  s.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items }));
}).on('error', () => process.exit(${ExitCode.ListenFailed})).listen(${p}, '127.0.0.1');`;

const startParts = (db: string, flags: string[], env: NodeJS.ProcessEnv, socket?: string) =>
  onFreePort('bench parts alone', (p) =>
    startAndWait(
      process.execPath,
      [...flags, '-e', partsScript(p, db, socket)],
      `http://127.0.0.1:${p}`,
      '/api/v1/pods',
      env,
    ),
  );

/** A bare node HTTP server, started and answering: the anchor of the memory and start rows. */
const startFloor = () =>
  onFreePort('bench floor', (p) =>
    startAndWait(process.execPath, ['-e', floorScript(p)], `http://127.0.0.1:${p}`, '/', serviceEnv),
  );

function pod(i: number): Pod {
  const name = `fp-${String(i).padStart(3, '0')}`;
  const probe = { exec: { command: ['true'] }, periodSeconds: 10 };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      nodeName: NODE,
      hostNetwork: true,
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'main',
          image: 'outpost.local/busybox:latest',
          imagePullPolicy: 'IfNotPresent',
          // Pod 0 logs a line a second for the `kubectl logs -f` follower; the others sleep.
          command: i === 0 ? ['sh', '-c', 'while true; do echo tick; sleep 1; done'] : ['sleep', '3600'],
          readinessProbe: probe,
          livenessProbe: probe,
        },
      ],
    },
  };
}

function writePods(dir: string, n: number): void {
  const items = Array.from({ length: n }, (_, i) => pod(i));
  writeFileSync(join(dir, 'pods.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
}

const serveArgs = (dataDir: string, extra: string[]) => [
  ...NODE_FLAGS,
  BUNDLE,
  'serve',
  '--listen',
  `127.0.0.1:${port}`,
  '--data-dir',
  dataDir,
  '--node-name',
  NODE,
  '--log-level',
  'warn',
  ...extra,
];

/**
 * Starts the agent and resolves at its first answer to GET /api/v1/pods, on a free port (another
 * one if that was taken before the agent bound it), which `url` then names.
 */
const startAgent = (dataDir: string, extra: string[], env: NodeJS.ProcessEnv = process.env) =>
  onFreePort('bench agent', (p) => {
    port = p;
    url = `http://127.0.0.1:${p}`;
    return startAndWait(process.execPath, serveArgs(dataDir, extra), url, '/api/v1/pods', env);
  });

/** Running pods of the namespace (every container running), through the API. */
async function runningPods(): Promise<number> {
  const res = await fetch(`${url}/api/v1/namespaces/${NS}/pods`).catch(() => undefined);
  if (!res?.ok) return 0;
  const list = (await res.json()) as { items: Pod[] };
  // Running rather than Ready: on a loaded machine a 1 s exec probe can time out and flip Ready.
  return list.items.filter(
    (p) => p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).every((c) => c.state?.running),
  ).length;
}

async function untilRunning(n: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 900_000;
  while ((await runningPods()) < n) {
    if (child.exitCode !== null) throw new Error(`outpost exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error(`${n} pods not running within 900 s`);
    await sleep(500);
  }
}

/** RSS sampled every 500 ms for `ms`: the median (steady state, GC ups and downs smoothed). */
async function steadyRss(pid: number, ms = 5000): Promise<number> {
  const samples: number[] = [];
  for (const end = Date.now() + ms; Date.now() < end; await sleep(500)) samples.push(rssMb(pid));
  return median(samples);
}

/** Bare node HTTP server, first answer given: its RSS (the memory anchor). */
async function floorRss(): Promise<number> {
  const f = await startFloor();
  await sleep(2000);
  const rss = rssMb(f.child.pid!);
  await stopChild(f.child);
  return rss;
}

interface PodRound {
  floor: number;
  /** The parts alone, the agent's V8 and malloc settings, on the idle agent's metabase. */
  parts: number;
  idle: number;
  rss20: number;
  rss100: number;
  /** CPU of the agent at 20 pods over the settled window, % of one core. */
  cpu20: number;
}

const lab = await startLab({ dir: LAB_DIR, keep: true, log: () => {} });
const cri = new CriClient({ endpoint: lab.endpoint, timeoutMs: 120_000 });

async function emptyNamespace(): Promise<void> {
  const labelSelector = { 'io.kubernetes.pod.namespace': NS };
  for (const s of await cri.listPodSandbox({ labelSelector })) {
    await cri.stopPodSandbox(s.id).catch(() => {});
    await cri.removePodSandbox(s.id).catch(() => {});
  }
}

// Reads go anonymously; `logs` needs credentials: the data directory's admin kubeconfig (https on
// the same port).
const kubectl = (args: string[], dataDir?: string) =>
  spawn(
    'kubectl',
    [...(dataDir ? ['--kubeconfig', adminKubeconfigPath(dataDir)] : ['--server', url]), ...args],
    {
      stdio: ['ignore', 'ignore', 'ignore'],
      env: { ...process.env, HOME: kubectlHome },
    },
  );

async function podRound(r: number): Promise<PodRound> {
  const dir = join(work, `round-${r}`);
  const manifests = join(dir, 'manifests');
  mkdirSync(manifests, { recursive: true });
  const floor = await floorRss();

  // Idle: empty metabase, no runtime at the endpoint.
  const idleDir = join(dir, 'idle');
  const none = ['--runtime-endpoint', `unix://${join(dir, 'none.sock')}`];
  const idle = await startAgent(idleDir, none, agentEnv);
  await sleep(2000);
  const idleRss = await steadyRss(idle.child.pid!, 3000);
  await stopChild(idle.child);
  const partsAlone = await startParts(join(idleDir, 'outpost.db'), NODE_FLAGS, agentEnv, lab.socket);
  await sleep(2000);
  const parts = rssMb(partsAlone.child.pid!);
  await stopChild(partsAlone.child);

  // 20 pods with probes, one log follower, one watcher; then 100.
  writePods(manifests, 20);
  const extra = ['--runtime-endpoint', lab.endpoint, '--manifests', manifests];
  const o = await startAgent(join(dir, 'data'), extra, agentEnv);
  const clients: ChildProcess[] = [];
  try {
    await untilRunning(20, o.child);
    clients.push(
      kubectl(['-n', NS, 'logs', '-f', 'fp-000'], join(dir, 'data')),
      kubectl(['get', 'pods', '-A', '-w']),
    );
    await sleep(2_000); // the clients are connected and streaming
    // CPU over the settling time: every pod's two probes run (every 10 s), the log follower gets a
    // line a second, the watcher every status change.
    const cpu0 = cpuSeconds(o.child.pid!);
    const t0 = performance.now();
    await sleep(SETTLE_MS);
    // A client refused (403, say) exits at once, and the row would measure no streaming at all.
    const gone = clients.find((c) => c.exitCode !== null);
    if (gone) throw new Error(`kubectl ${gone.spawnargs.slice(3).join(' ')} exited with ${gone.exitCode}`);
    const rss20 = await steadyRss(o.child.pid!);
    const cpu20 = ((cpuSeconds(o.child.pid!) - cpu0) / ((performance.now() - t0) / 1000)) * 100;
    writePods(manifests, 100);
    await untilRunning(100, o.child);
    await sleep(SETTLE_MS);
    const rss100 = await steadyRss(o.child.pid!);
    return { floor, parts, idle: idleRss, rss20, rss100, cpu20 };
  } finally {
    for (const c of clients) await stopChild(c);
    await stopChild(o.child);
    await emptyNamespace();
  }
}

/** Wall time of a command run to its end, from spawn. */
function runMs(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return performance.now() - t0;
}

/** Waits until the agent lists `n` pods of the namespace (its manifests synced), at most 120 s. */
async function untilListed(n: number, child: ChildProcess): Promise<void> {
  for (const end = Date.now() + 120_000; ; await sleep(100)) {
    const res = await fetch(`${url}/api/v1/namespaces/${NS}/pods`, { signal: AbortSignal.timeout(10_000) });
    if (((await res.json()) as { items: [] }).items.length >= n) return;
    if (child.exitCode !== null) throw new Error(`outpost exited with ${child.exitCode}`);
    if (Date.now() > end) throw new Error(`the agent did not list ${n} pods within 120 s`);
  }
}

/** Spawn -> first cached read (10 pods, runtime absent) and spawn -> bare server's first answer. */
async function firstReads(): Promise<{ outpost: number[]; floor: number[]; parts: number[] }> {
  const dataDir = join(work, 'first-read');
  const manifests = join(work, 'first-read-manifests');
  mkdirSync(manifests, { recursive: true });
  writePods(manifests, 10);
  const none = ['--runtime-endpoint', `unix://${join(work, 'none.sock')}`];
  // Seed the metabase once: the pods are then cached reads for every later start.
  const seed = await startAgent(dataDir, [...none, '--manifests', manifests], agentEnv);
  await untilListed(10, seed.child);
  await stopChild(seed.child);
  const outpost: number[] = [];
  const floor: number[] = [];
  const parts: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const f = await startFloor();
    floor.push(f.readyMs);
    await stopChild(f.child);
    // As the bare server: no V8 flags (each costs Node's own modules their code cache).
    const a = await startParts(join(dataDir, 'outpost.db'), [], serviceEnv);
    parts.push(a.readyMs);
    await stopChild(a.child);
    const o = await startAgent(dataDir, none, agentEnv);
    outpost.push(o.readyMs);
    await stopChild(o.child);
  }
  return { outpost, floor, parts };
}

/** `outpost get pods -A` vs `kubectl get pods -A`, and `outpost --version` vs `node -e 1`, against 100 pods. */
async function cliTimes() {
  const dir = join(work, 'cli');
  const manifests = join(dir, 'manifests');
  mkdirSync(manifests, { recursive: true });
  writePods(manifests, 100);
  const none = ['--runtime-endpoint', `unix://${join(dir, 'none.sock')}`];
  const dataDir = join(dir, 'data');
  const o = await startAgent(dataDir, [...none, '--manifests', manifests]);
  try {
    await untilListed(100, o.child);
    const env = { ...process.env, HOME: kubectlHome, OUTPOST_DATA_DIR: dataDir };
    runMs('kubectl', ['--server', url, 'get', 'pods', '-A'], env); // warm kubectl's discovery cache
    const t = { get: [] as number[], kubectl: [] as number[], version: [] as number[], node: [] as number[] };
    for (let i = 0; i < STARTS; i++) {
      t.kubectl.push(runMs('kubectl', ['--server', url, 'get', 'pods', '-A'], env));
      t.get.push(runMs(process.execPath, [BUNDLE, 'get', 'pods', '-A', '--server', url], env));
      t.node.push(runMs(process.execPath, ['-e', '1']));
      t.version.push(runMs(process.execPath, [BUNDLE, '--version']));
    }
    return t;
  } finally {
    await stopChild(o.child);
  }
}

const rounds: PodRound[] = [];
let reads: Awaited<ReturnType<typeof firstReads>> | undefined;
let cli: Awaited<ReturnType<typeof cliTimes>> | undefined;
try {
  await emptyNamespace();
  for (let r = 0; PARTS.has('memory') && r < ROUNDS; r++) {
    rounds.push(await podRound(r));
    // Each round as it ends, so a run cut short still tells what it measured.
    console.error(`round ${r + 1}/${ROUNDS}: ${JSON.stringify(rounds[r])}`);
  }
  if (PARTS.has('start')) reads = await firstReads();
  if (PARTS.has('cli')) cli = await cliTimes();
} finally {
  await emptyNamespace().catch(() => {});
  cri.close();
  rmSync(work, { recursive: true, force: true });
  if (!process.env.BENCH_KEEP_LAB) await stopLab({ dir: LAB_DIR, log: () => {} });
}

console.log(
  `\nOutpost footprint (${BUNDLE}, ${AGENT_SETTINGS}); node ${process.version}, ${new Date().toISOString()}; median (min-max) of ${ROUNDS} rounds (memory) and ${STARTS} spawns (times)\n`,
);
const col = (f: (r: PodRound) => number) => spread(rounds.map(f), 1);
const ratio = (f: (r: PodRound) => number) =>
  spread(
    rounds.map((r) => f(r) / r.floor),
    2,
  );
/** A row of one RSS figure per round beside the bare server's, median (min-max), and their ratio per round. */
const rssRow = (what: string, f: (r: PodRound) => number, published: string, target: string) => [
  what,
  col(f),
  col((r) => r.floor),
  ratio(f),
  published,
  target,
];
const memoryRows = PARTS.has('memory')
  ? [
      rssRow('RSS idle, runtime absent (MB)', (r) => r.idle, 'YurtHub 35-40', '-'),
      rssRow(
        `RSS, 20 pods, probes, logs -f, get -w, after ${SETTLE_MS / 1000} s (MB)`,
        (r) => r.rss20,
        'edgecore 61.3 at 5, 74.1 at 40 pods',
        '<= 60',
      ),
      rssRow(`RSS, 100 pods, after ${SETTLE_MS / 1000} s (MB)`, (r) => r.rss100, '-', '-'),
      ['RSS growth 20 -> 100 pods (MB)', col((r) => r.rss100 - r.rss20), '-', '-', '-', '<= 15'],
      rssRow('RSS, the parts alone: server on the metabase, HTTP/2, TLS (MB)', (r) => r.parts, '-', '-'),
      [
        `CPU, 20 pods as above, over those ${SETTLE_MS / 1000} s (% of a core)`,
        col((r) => r.cpu20),
        '-',
        '-',
        '-',
        '-',
      ],
    ]
  : [];
/** A row of spawn times: `xs` and its anchor's, median (min-max), and their ratio per spawn pair. */
const timeRow = (what: string, xs: number[], anchor: number[], anchorName: string, target: string) => [
  what,
  spread(xs, 1),
  `${spread(anchor, 1)} ${anchorName}`,
  spread(
    xs.map((v, i) => v / anchor[i]!),
    2,
  ),
  '-',
  target,
];
const rd = reads;
const startRows = rd
  ? [
      timeRow('spawn -> first cached read (ms)', rd.outpost, rd.floor, 'bare node server', '<= 1.5x'),
      timeRow(
        'spawn -> first answer, the parts alone, no V8 flags (ms)',
        rd.parts,
        rd.floor,
        'bare node server',
        '-',
      ),
    ]
  : [];
const cl = cli;
const cliRows = cl
  ? [
      timeRow('`outpost get pods -A`, 100 pods (ms)', cl.get, cl.kubectl, 'kubectl', '<= 2x'),
      timeRow('`outpost --version` (ms)', cl.version, cl.node, 'node -e 1', '<= 1.5x'),
    ]
  : [];
printTable(
  ['what', 'Outpost', 'anchor (same run)', 'ratio', 'published anchor', 'target'],
  [...memoryRows, ...startRows, ...cliRows],
);
console.log(
  '\nratios: Outpost / anchor per round (memory) or per spawn pair (times), then median (min-max).',
);
