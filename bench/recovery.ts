// npm run bench:recovery — how fast the bundled agent brings a node's pods back, on the lab's
// containerd, next to the raw CRI floor measured in the same run: the same RunPodSandbox +
// CreateContainer + StartContainer calls issued directly through lib/cri/client.ts, fully parallel.
//
//   (a) cold recovery: the runtime emptied (a wiped node), Outpost started → every pod running;
//   (b) Outpost-only restart: kill -9, start again → every pod adopted (same container IDs).
//
// Each runs twice: pods with `hostNetwork: true` (host) and pods in their own network namespace
// through the lab's CNI (bridge + host-local + portmap), the floor with the same sandboxes.
//
// The lab is a private one (OUTPOST_BENCH_LAB, default /tmp/outpost-lab-bench), so emptying its
// runtime never touches anybody else's pods. BENCH_SIZES (default 10,50), BENCH_ROUNDS (default 3),
// BENCH_NETWORKS (default host,cni),
// OUTPOST_BUNDLE (default dist/outpost.cjs: another build, to compare two versions),
// BENCH_COMPARE (another build's outpost.cjs, inside this checkout so that it finds node_modules):
// each round also measures its cold recovery on the same wiped runtime, in alternating order
// with OUTPOST_BUNDLE's, beside the same floor,
// BENCH_RUNTIME=node|deno|bun (default node: what runs the bundle; Deno and Bun from node_modules).
// On node the agent runs with the unit's V8 flags and malloc settings (bench/lib.ts: BENCH_NODE_FLAGS
// replaces the flags, empty for none; BENCH_MALLOC=glibc), as a board's agent does;
// BENCH_AGENT_FLAGS: more node flags for the agent (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
// BENCH_TRACE=1: the agent logs at debug level (which costs it some time) and each cold start's
// timeline is printed: the `sinceProcessStartMs` marks and, per CRI method, the first call's start
// and the last call's end, in ms since the spawn; beside them the floor's own per-method timeline.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import { buildContainerConfig, podSpecHash } from '#lib/pods/spec/container-config.ts';
import { buildSandboxConfig } from '#lib/pods/worker/sandbox.ts';
import { startLab, stopLab } from '../scripts/lab.ts';
import {
  AGENT_SETTINGS,
  agentEnv,
  median,
  NODE_FLAGS,
  printTable,
  rssMb,
  serviceEnv,
  spread,
  stopChild,
} from './lib.ts';

const SIZES = (process.env.BENCH_SIZES ?? '10,50').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const NETWORKS = (process.env.BENCH_NETWORKS ?? 'host,cni').split(',') as ('host' | 'cni')[];
const TRACE = !!process.env.BENCH_TRACE;
/** The network of the pods being measured. */
let network: 'host' | 'cni' = 'host';
const LAB_DIR = process.env.OUTPOST_BENCH_LAB ?? '/tmp/outpost-lab-bench';
const BUNDLE = process.env.OUTPOST_BUNDLE ?? 'dist/outpost.cjs';
const COMPARE = process.env.BENCH_COMPARE;
// Below the ephemeral range (32768+), where an outgoing connection could hold it.
const PORT = 20000 + ((process.pid + 7) % 12000);
const NS = 'bench';
const NODE = 'bench-node';
const url = `http://127.0.0.1:${PORT}`;
const work = mkdtempSync(join(tmpdir(), 'outpost-bench-recovery-'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const lab = await startLab({ dir: LAB_DIR, keep: true, log: () => {} });
const cri = new CriClient({ endpoint: lab.endpoint, timeoutMs: 120_000 });

function pod(i: number, prefix = 'p'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${prefix}-${String(i).padStart(2, '0')}`, namespace: NS, uid: `${prefix}-uid-${i}` },
    spec: {
      nodeName: NODE,
      ...(network === 'host' ? { hostNetwork: true } : {}),
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'main',
          image: lab.images.app,
          imagePullPolicy: 'IfNotPresent',
          command: ['sleep', '3600'],
        },
      ],
    },
  };
}

/** Stops and removes every sandbox the runtime holds, all at once. */
async function emptyRuntime(): Promise<void> {
  const sandboxes = await cri.listPodSandbox();
  await Promise.all(
    sandboxes.map(async (s) => {
      await cri.stopPodSandbox(s.id);
      await cri.removePodSandbox(s.id);
    }),
  );
  await Promise.all((await cri.listContainers()).map((c) => cri.removeContainer(c.id)));
}

interface Times {
  first: number;
  last: number;
}

/** One CRI call, in ms since the start being traced. */
interface Call {
  method: string;
  start: number;
  end: number;
}

/** Per method: calls, first start and last end (ms). */
function timeline(calls: Call[]): string {
  const by = new Map<string, Call[]>();
  for (const c of calls) by.set(c.method, [...(by.get(c.method) ?? []), c]);
  return [...by]
    .sort((a, b) => Math.min(...a[1].map((c) => c.start)) - Math.min(...b[1].map((c) => c.start)))
    .map(
      ([m, cs]) =>
        `${m} x${cs.length} ${Math.round(Math.min(...cs.map((c) => c.start)))}-${Math.round(Math.max(...cs.map((c) => c.end)))}`,
    )
    .join(', ');
}
const span = (t0: number, done: number[]): Times => ({
  first: (Math.min(...done) - t0) / 1000,
  last: (Math.max(...done) - t0) / 1000,
});

/** The floor: each pod's sandbox, container create and start, issued directly and fully parallel. */
async function floorCreate(n: number): Promise<Times> {
  const logs = join(work, 'floor-logs');
  const pods = Array.from({ length: n }, (_, i) => pod(i, 'floor'));
  const configs = pods.map((p) => {
    const specHash = podSpecHash(p);
    const logDirectory = join(logs, p.metadata.name!);
    mkdirSync(join(logDirectory, 'main'), { recursive: true });
    const sandbox = buildSandboxConfig(p, { attempt: 0, logDirectory, specHash, managedBy: 'bench' });
    const container = buildContainerConfig(p, p.spec.containers[0]!, {
      attempt: 0,
      restartCount: 0,
      volumes: new Map(),
      envs: [],
      logPath: 'main/0.log',
      specHash,
    });
    return { sandbox, container };
  });
  const t0 = performance.now();
  const calls: Call[] = [];
  const timed = async <T>(method: string, p: () => Promise<T>): Promise<T> => {
    const start = performance.now() - t0;
    const r = await p();
    calls.push({ method, start, end: performance.now() - t0 });
    return r;
  };
  const done = await Promise.all(
    configs.map(async ({ sandbox, container }) => {
      const id = await timed('RunPodSandbox', () => cri.runPodSandbox(sandbox));
      const cid = await timed('CreateContainer', () => cri.createContainer(id, container, sandbox));
      await timed('StartContainer', () => cri.startContainer(cid));
      return performance.now();
    }),
  );
  const times = span(t0, done);
  if (TRACE) console.log(`floor, ${n} pods: ${timeline(calls)}`);
  await emptyRuntime();
  rmSync(logs, { recursive: true, force: true });
  return times;
}

/** The adoption floor: one relist, then every container's status, fully parallel. */
async function floorAdopt(): Promise<Times> {
  const t0 = performance.now();
  const [, containers] = await Promise.all([cri.listPodSandbox(), cri.listContainers()]);
  const done = await Promise.all(
    containers.map(async (c) => {
      await cri.containerStatus(c.id);
      return performance.now();
    }),
  );
  return span(t0, done);
}

interface Outpost {
  child: ChildProcess;
  t0: number;
  /** With BENCH_TRACE: the agent's stderr (debug log) and its spawn on the epoch clock. */
  log?: string;
  epoch?: number;
}

const RUNTIME = process.env.BENCH_RUNTIME ?? 'node';
const RUNNER: string[] =
  { node: [process.execPath], deno: ['node_modules/.bin/deno', 'run', '-A'], bun: ['node_modules/.bin/bun'] }[
    RUNTIME
  ] ?? [];
if (RUNNER.length === 0) throw new Error(`BENCH_RUNTIME must be node, deno or bun (got ${RUNTIME})`);

let traces = 0;
function startOutpost(dataDir: string, manifests: string, bundle = BUNDLE): Outpost {
  const log = TRACE ? join(work, `agent-${++traces}.log`) : undefined;
  const err = log ? openSync(log, 'w') : 'inherit';
  const epoch = Date.now();
  const t0 = performance.now();
  const args = [bundle, 'serve', '--listen', `127.0.0.1:${PORT}`, '--data-dir', dataDir];
  args.push('--manifests', manifests, '--runtime-endpoint', lab.endpoint, '--node-name', NODE);
  // On node, the unit's V8 flags and malloc settings (bench/lib.ts), as a board's agent recovers.
  const flags =
    RUNTIME === 'node'
      ? [...NODE_FLAGS, ...(process.env.BENCH_AGENT_FLAGS ?? '').split(' ').filter(Boolean)]
      : [];
  const child = spawn(
    RUNNER[0]!,
    [...flags, ...RUNNER.slice(1), ...args, '--log-level', log ? 'debug' : 'warn'],
    { stdio: ['ignore', 'ignore', err], env: RUNTIME === 'node' ? agentEnv : serviceEnv },
  );
  if (typeof err === 'number') closeSync(err);
  return { child, t0, ...(log ? { log, epoch } : {}) };
}

/** The agent's timeline from its debug log (BENCH_TRACE): marks, then CRI calls per method. */
function agentTimeline(o: Outpost): string {
  if (!o.log || o.epoch === undefined) return '';
  const calls: Call[] = [];
  let marks = '';
  for (const line of readFileSync(o.log, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    const l = JSON.parse(line) as {
      msg?: string;
      time?: string;
      method?: string;
      ms?: number;
      sinceProcessStartMs?: unknown;
    };
    if (l.msg?.startsWith('CRI call') && l.time && l.method) {
      const end = Date.parse(l.time) - o.epoch;
      calls.push({ method: l.method, start: end - (l.ms ?? 0), end });
    }
    if (l.msg?.startsWith('pods recovered')) marks = JSON.stringify(l.sinceProcessStartMs);
  }
  return `marks ${marks}\n  CRI: ${timeline(calls)}`;
}

// A CPU profile is written only by a process that exits: then the agent is stopped gracefully
// (it leaves its pods running, as kill -9 does).
const kill9 = (o: Outpost): Promise<void> =>
  stopChild(o.child, process.env.BENCH_AGENT_FLAGS?.includes('--cpu-prof') ? 'SIGTERM' : 'SIGKILL');

type PodCheck = (p: Pod) => boolean;

/** Watches the pods through the API from the moment it answers; resolves with when each pod first passed `check`. */
async function watchUntil(o: Outpost, n: number, check: PodCheck): Promise<Times & { api: number }> {
  const seen = new Map<string, number>();
  let api = 0;
  const deadline = Date.now() + 180_000;
  while (seen.size < n) {
    if (Date.now() > deadline) throw new Error(`only ${seen.size}/${n} pods got there in 180 s`);
    if (o.child.exitCode !== null) throw new Error(`outpost exited with ${o.child.exitCode}`);
    let res: Response;
    try {
      res = await fetch(`${url}/api/v1/namespaces/${NS}/pods?watch=1`);
    } catch {
      await sleep(2);
      continue;
    }
    api ||= performance.now();
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    while (seen.size < n) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const ev = JSON.parse(buf.slice(0, nl)) as { object: Pod };
        buf = buf.slice(nl + 1);
        const name = ev.object.metadata.name!;
        if (!seen.has(name) && check(ev.object)) seen.set(name, performance.now());
      }
    }
    await reader.cancel().catch(() => {});
  }
  return { ...span(o.t0, [...seen.values()]), api: (api - o.t0) / 1000 };
}

const ids = (p: Pod) => (p.status?.containerStatuses ?? []).map((s) => s.containerID ?? '');
const running = (p: Pod) =>
  p.status?.phase === 'Running' &&
  (p.status.containerStatuses ?? []).length === p.spec.containers.length &&
  (p.status.containerStatuses ?? []).every((s) => s.state?.running);

async function currentIds(): Promise<Map<string, string[]>> {
  const res = await fetch(`${url}/api/v1/namespaces/${NS}/pods`);
  const list = (await res.json()) as { items: Pod[] };
  return new Map(list.items.map((p) => [p.metadata.name!, ids(p)]));
}

interface Round {
  floor: Times;
  cold: Times & { api: number };
  adoptFloor: Times;
  adopt: Times & { api: number };
  /** BENCH_COMPARE's cold recovery in the same round. */
  compare?: Times & { api: number };
}

async function benchSize(n: number): Promise<{ rounds: Round[]; rss: number }> {
  const dir = join(work, `n${n}-${network}`);
  const manifests = join(dir, 'manifests');
  const dataDir = join(dir, 'data');
  mkdirSync(manifests, { recursive: true });
  const items = Array.from({ length: n }, (_, i) => {
    const p = pod(i);
    delete p.metadata.uid; // the metabase gives uids
    return p;
  });
  writeFileSync(join(manifests, 'pods.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
  await emptyRuntime();
  // Warm-up: the metabase learns the pods and Outpost runs them once; BENCH_COMPARE's build then
  // adopts them once too, so that each build has written its code cache before the rounds.
  let o = startOutpost(dataDir, manifests);
  await watchUntil(o, n, running);
  if (COMPARE) {
    await kill9(o);
    o = startOutpost(dataDir, manifests, COMPARE);
    await watchUntil(o, n, running);
    await kill9(o);
    o = startOutpost(dataDir, manifests);
    await watchUntil(o, n, running);
  }
  let rss = 0;
  const rounds: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // (a) cold: a wiped runtime; the floor first, then Outpost on the same empty runtime.
    const stale = new Set([...(await currentIds()).values()].flat());
    await kill9(o);
    await emptyRuntime();
    const floor = await floorCreate(n);
    // With BENCH_COMPARE, both builds recover from a wiped runtime, in alternating order.
    const order = COMPARE ? (r % 2 ? [COMPARE, BUNDLE] : [BUNDLE, COMPARE]) : [BUNDLE];
    let cold: Times & { api: number } = { first: 0, last: 0, api: 0 };
    let compare: (Times & { api: number }) | undefined;
    for (const [i, bundle] of order.entries()) {
      if (i > 0) {
        await kill9(o);
        await emptyRuntime();
      }
      o = startOutpost(dataDir, manifests, bundle);
      const t = await watchUntil(o, n, (p) => running(p) && ids(p).every((id) => !stale.has(id)));
      if (bundle === BUNDLE && i === order.indexOf(BUNDLE)) cold = t;
      else compare = t;
      if (TRACE) {
        await sleep(500); // the log lines after the last status
        console.log(
          `cold, ${n} pods, round ${r + 1}, ${bundle}: first ${Math.round(t.first * 1000)} last ${Math.round(t.last * 1000)} ms; ${agentTimeline(o)}`,
        );
      }
      for (const ids of (await currentIds()).values()) for (const id of ids) stale.add(id);
    }

    // (b) Outpost only: kill -9, then start again on the running pods.
    const before = await currentIds();
    await kill9(o);
    // The stored statuses already say Running: drop them so each pod's adoption shows in the API.
    const db = new Database(join(dataDir, 'outpost.db'));
    db.prepare('DELETE FROM pod_status').run();
    db.close();
    const adoptFloor = await floorAdopt();
    o = startOutpost(dataDir, manifests);
    const adopt = await watchUntil(
      o,
      n,
      (p) => running(p) && ids(p).join() === (before.get(p.metadata.name!) ?? []).join(),
    );
    rounds.push({ floor, cold, adoptFloor, adopt, ...(compare ? { compare } : {}) });
    if (r === ROUNDS - 1) {
      await sleep(2000); // a few relists and status writes in steady state
      rss = rssMb(o.child.pid!);
    }
  }
  await kill9(o);
  await emptyRuntime();
  return { rounds, rss };
}

const results = new Map<string, { n: number; net: string; rounds: Round[]; rss: number }>();
try {
  for (const n of SIZES) {
    for (const net of NETWORKS) {
      network = net;
      results.set(`${n} ${net}`, { n, net, ...(await benchSize(n)) });
    }
  }
} finally {
  cri.close();
  rmSync(work, { recursive: true, force: true });
  if (!process.env.BENCH_KEEP_LAB) await stopLab({ dir: LAB_DIR, log: () => {} });
}

console.log(
  `\nOutpost recovery on containerd (lab), busybox pods, host network and CNI, images present; the agent on ${RUNTIME}${RUNTIME === 'node' ? ` (${AGENT_SETTINGS})` : ''} (the bench on node ${process.version}), ${new Date().toISOString()}`,
);
console.log(
  `times in seconds from agent start (floor: from the first call); median (min-max) of ${ROUNDS} rounds\n`,
);
const rows: (string | number)[][] = [];
for (const { n, net, rounds } of results.values()) {
  const col = (f: (r: Round) => number, d = 2) => spread(rounds.map(f), d);
  rows.push([
    'cold: runtime wiped, agent started',
    String(n),
    net,
    col((r) => r.cold.api),
    col((r) => r.cold.first),
    col((r) => r.cold.last),
    col((r) => r.cold.last - r.cold.first),
    col((r) => r.floor.first),
    col((r) => r.floor.last),
    col((r) => r.cold.last / r.floor.last),
    col((r) => r.cold.first - r.floor.first),
    net === 'host' && (n === 10 || n === 50)
      ? `last <= 1.2 x floor; first - floor first <= 0.3${n === 10 ? '; first->last <= 0.3' : ''}`
      : '-',
  ]);
  if (COMPARE)
    rows.push([
      `cold, BENCH_COMPARE (${COMPARE})`,
      String(n),
      net,
      col((r) => r.compare!.api),
      col((r) => r.compare!.first),
      col((r) => r.compare!.last),
      col((r) => r.compare!.last - r.compare!.first),
      col((r) => r.floor.first),
      col((r) => r.floor.last),
      col((r) => r.compare!.last / r.floor.last),
      col((r) => r.compare!.first - r.floor.first),
      '-',
    ]);
  rows.push([
    'restart: kill -9, agent started',
    String(n),
    net,
    col((r) => r.adopt.api),
    col((r) => r.adopt.first),
    col((r) => r.adopt.last),
    col((r) => r.adopt.last - r.adopt.first),
    col((r) => r.adoptFloor.first, 3),
    col((r) => r.adoptFloor.last, 3),
    col((r) => r.adopt.last / r.floor.last),
    '-',
    '-',
  ]);
}
printTable(
  [
    'scenario',
    'pods',
    'network',
    'API up',
    'first running',
    'last running',
    'first->last',
    'floor first',
    'floor last',
    'last / create floor',
    'first - floor first',
    'target',
  ],
  rows,
);
if (NETWORKS.length > 1) {
  const last = (n: number, net: string) =>
    median(results.get(`${n} ${net}`)?.rounds.map((r) => r.cold.last) ?? [0]);
  console.log('\ncold recovery, last pod running: pods in their own network (CNI) beside host network');
  printTable(
    ['pods', 'host network (s)', 'CNI (s)', 'CNI / host'],
    SIZES.map((n) => [
      String(n),
      last(n, 'host').toFixed(2),
      last(n, 'cni').toFixed(2),
      (last(n, 'cni') / last(n, 'host')).toFixed(2),
    ]),
  );
}
console.log(
  '\nfloor, cold: RunPodSandbox + CreateContainer + StartContainer per pod; floor, restart: ListPodSandbox +',
);
console.log('ListContainers + ContainerStatus per container. Both fully parallel, same lab, same run.\n');
printTable(
  ['what', 'Outpost', 'anchor', 'target'],
  [...results.values()].map(({ n, net, rss }) => [
    `RSS with ${n} pods running, ${net} (MB)`,
    rss.toFixed(1),
    n === 20 ? 'edgecore 67.5' : 'edgecore 61.3 at 5, 74.1 at 40 pods',
    '<= 60 at 20 pods (bench:footprint)',
  ]),
);
