// npm run bench:fleet -- --nodes N [--minutes 5] [--outage-minutes 2] [--baseline-minutes 1]
//                        [--pods-per-node 10] [--only outpost|kubelet] [--json FILE]
//
// Issue 22's fleet benchmark. For each side, on a fresh real control plane of the cloud lab
// (kube-apiserver 1.20.2 with an audit log of every node identity's request): the control plane
// alone first (its own request rate, watches, RSS), then N nodes (Outposts with --cloud on fake
// CRI sockets, or kubemark hollow kubelets), all Ready, measured idle for --minutes (requests/min
// by kind from apiserver_request_total minus the control plane alone, and from the audit log by
// node identity; open watches; TCP connections; bytes each way; RSS and CPU per node; API-server
// RSS per node), then a Deployment of --pods-per-node pods per node (time to all Running,
// requests per pod started, events apart), then the API server stopped --outage-minutes and
// started again (time to all Nodes Ready with renewed Leases, peak request rate at reconnect,
// LISTs per node, and for Outpost that every status and event written while cut off arrived).
// Prints Outpost beside the kubelet as ratios and a JSON summary (stdout's last line, or --json).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '#lib/kube/types.ts';
import { type ControlPlane, startControlPlane } from '../scripts/cloud/plane.ts';
import { adminHeaders } from '../test/helpers/agent.ts';
import {
  AuditReader,
  auditFlags,
  countBy,
  type NodeRequest,
  ratePerMinute,
  type Scrape,
  scrape,
  sum,
} from './fleet/apiserver.ts';
import { type Fleet, startHollowKubelets, startOutposts } from './fleet/nodes.ts';
import { ByteMeter, cpuSeconds } from './fleet/procs.ts';
import { printTable, rssMb } from './lib.ts';

const argv = process.argv.slice(2);
const flag = (name: string, def: number) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : def;
};
const NODES = flag('nodes', 100);
const MINUTES = flag('minutes', 5);
const BASELINE = flag('baseline-minutes', 1);
const OUTAGE = flag('outage-minutes', 2);
const PODS_PER_NODE = flag('pods-per-node', 10);
const onlyAt = argv.indexOf('--only');
const SIDES = (onlyAt >= 0 ? [argv[onlyAt + 1]] : ['outpost', 'kubelet']) as Fleet['kind'][];
const jsonAt = argv.indexOf('--json');
const JSON_FILE = jsonAt >= 0 ? argv[jsonAt + 1] : undefined;
const NS = 'fleet';

const started = Date.now();
/** What a signal must stop: the running fleet first, then its control plane. */
const cleanups: (() => Promise<void>)[] = [];
const log = (line: string) => {
  const s = Math.round((Date.now() - started) / 1000);
  process.stderr.write(
    `fleet [${String(Math.floor(s / 60)).padStart(3)}m${String(s % 60).padStart(2, '0')}s] ${line}\n`,
  );
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const safeRss = (pid: number) => {
  try {
    return rssMb(pid);
  } catch {
    return 0;
  }
};
const perNode = (m: Map<string, number>, div: number) =>
  new Map([...m].map(([k, v]) => [k, v / div] as [string, number]));
const round = (v: number, d = 2) => Math.round(v * 10 ** d) / 10 ** d;
const obj = (m: Map<string, number>, d = 2) =>
  Object.fromEntries(
    [...m]
      .filter(([, v]) => Math.abs(v) >= 0.005)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => [k, round(v, d)]),
  );

async function until<T>(
  what: string,
  fn: () => Promise<T | false>,
  timeoutMs: number,
  everyMs = 1000,
): Promise<T> {
  for (const end = Date.now() + timeoutMs; ; await sleep(everyMs)) {
    const v = await fn().catch(() => false as const);
    if (v !== false) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
  }
}

async function getJson<T>(plane: ControlPlane, path: string): Promise<T> {
  const r = await plane.adminGet(path);
  if (r.status !== 200) throw new Error(`GET ${path}: HTTP ${r.status}`);
  return JSON.parse(r.body) as T;
}

interface NodeObj {
  metadata: { name: string };
  status?: { conditions?: { type: string; status: string }[] };
}
const ready = (n: NodeObj) =>
  n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

async function readyNodes(plane: ControlPlane, names: Set<string>): Promise<number> {
  const { items } = await getJson<{ items: NodeObj[] }>(plane, '/api/v1/nodes');
  return items.filter((n) => names.has(n.metadata.name) && ready(n)).length;
}

/** Sleeps `ms`, calling `tick` every `everyMs` and logging progress every minute. */
async function window(what: string, ms: number, tick: () => void, everyMs = 10_000): Promise<void> {
  const end = Date.now() + ms;
  let lastLog = Date.now();
  while (Date.now() < end) {
    await sleep(Math.min(everyMs, end - Date.now()));
    tick();
    if (Date.now() - lastLog >= 60_000) {
      lastLog = Date.now();
      log(`${what}: ${Math.round((end - Date.now()) / 1000)} s left (load ${loadavg()[0]!.toFixed(1)})`);
    }
  }
}

/** Node requests of the window by key, per node, per minute. */
const auditRate = (reqs: NodeRequest[], nodes: number, minutes: number) =>
  perNode(
    countBy(reqs, (r) => r.key),
    nodes * minutes,
  );

async function runSide(kind: Fleet['kind'], work: string) {
  const dir = join(work, kind);
  const planeDir = join(dir, 'plane');
  mkdirSync(dir, { recursive: true });
  log(`${kind}: starting a control plane`);
  const plane = await startControlPlane({ dir: planeDir, log: () => {}, apiserverFlags: auditFlags(dir) });
  cleanups.push(() => plane.stop());
  const audit = new AuditReader(join(dir, 'audit.log'));
  const apiPid = () => plane.pids()['kube-apiserver']!;
  const result: Record<string, unknown> = { kind, nodes: NODES };
  let fleet: Fleet | undefined;
  try {
    // The control plane alone.
    await sleep(15_000);
    const b0 = await scrape(plane.adminGet);
    const apiRss0 = safeRss(apiPid());
    log(`${kind}: control plane alone for ${BASELINE} min`);
    await window('control plane alone', BASELINE * 60_000, () => {});
    const b1 = await scrape(plane.adminGet);
    const baseRate = ratePerMinute(b0, b1);
    const baseWatches = sum(b1.watches);
    result.controlPlaneAlone = {
      requestsPerMin: round(sum(baseRate)),
      watches: baseWatches,
      apiserverRssMb: round(apiRss0, 1),
    };

    // The fleet, all Ready.
    const names = Array.from(
      { length: NODES },
      (_, i) => `${kind === 'outpost' ? 'op' : 'hk'}-${String(i).padStart(3, '0')}`,
    );
    const nameSet = new Set(names);
    const tStart = Date.now();
    const opts = {
      dir,
      names,
      kubeconfig: (n: string) => plane.nodeKubeconfig(n),
      log: (l: string) => log(`${kind}: ${l}`),
    };
    fleet = kind === 'outpost' ? await startOutposts(opts) : await startHollowKubelets(opts);
    cleanups.unshift(fleet.stop);
    const pids = new Set(fleet.nodes.map((n) => n.pid));
    let lastReady = -1;
    await until(
      'all Nodes Ready',
      async () => {
        const n = await readyNodes(plane, nameSet);
        if (n !== lastReady) log(`${kind}: ${n}/${NODES} Nodes Ready`);
        lastReady = n;
        return n === NODES && true;
      },
      15 * 60_000,
      2_000,
    );
    result.startToAllReadySeconds = round((Date.now() - tStart) / 1000, 1);
    log(`${kind}: all ${NODES} Nodes Ready; settling 30 s`);
    await sleep(30_000);

    // Idle.
    const meter = new ByteMeter(plane.port);
    meter.sample();
    const s0: Scrape = await scrape(plane.adminGet);
    const cpu0 = [...pids].map(cpuSeconds);
    const rss: number[] = [];
    const t0 = Date.now();
    log(`${kind}: idle window, ${MINUTES} min`);
    await window(`${kind} idle`, MINUTES * 60_000, () => {
      meter.sample();
      rss.push([...pids].reduce((a, p) => a + safeRss(p), 0) / NODES);
    });
    meter.sample();
    const s1 = await scrape(plane.adminGet);
    const t1 = Date.now();
    const minutes = (t1 - t0) / 60_000;
    const cpu1 = [...pids].map(cpuSeconds);
    const rate = ratePerMinute(s0, s1);
    const fleetRate = new Map([...rate].map(([k, v]) => [k, v - (baseRate.get(k) ?? 0)] as [string, number]));
    const idleAudit = auditRate(audit.between(t0, t1), NODES, minutes);
    const bytes = meter.totals(pids);
    // Watches the fleet added, by resource (the control plane's own, measured alone, apart).
    const watchesByResource = new Map(
      [...s1.watches].map(([k, v]) => [k, (v - (b1.watches.get(k) ?? 0)) / NODES] as [string, number]),
    );
    const idle = {
      requestsPerMinPerNode: round(sum(fleetRate) / NODES),
      requestsPerMinPerNodeByKind: obj(perNode(fleetRate, NODES)),
      nodeIdentityRequestsPerMin: round(sum(idleAudit)),
      nodeIdentityRequestsByKind: obj(idleAudit),
      watchesPerNode: round((sum(s1.watches) - baseWatches) / NODES),
      watchesPerNodeByResource: obj(watchesByResource),
      nodeWatchStartsPerMin: round(
        [...idleAudit].filter(([k]) => k.startsWith('WATCH ')).reduce((a, [, v]) => a + v, 0),
      ),
      tcpConnectionsPerNode: round(bytes.connections / NODES),
      kbPerMinUpPerNode: round(bytes.up / 1024 / NODES / minutes),
      kbPerMinDownPerNode: round(bytes.down / 1024 / NODES / minutes),
      rssMbPerNode: round(rss.reduce((a, b) => a + b, 0) / Math.max(1, rss.length), 1),
      cpuPercentPerNode: round(
        (100 * (sum(new Map(cpu1.map((v, i) => [String(i), v - cpu0[i]!]))) / NODES)) / (minutes * 60),
        2,
      ),
      apiserverRssMbPerNode: round((safeRss(apiPid()) - apiRss0) / NODES, 2),
      minutes: round(minutes),
    };
    result.idle = idle;
    log(
      `${kind}: idle ${idle.requestsPerMinPerNode} requests/min/node (node identities ${idle.nodeIdentityRequestsPerMin}), ${idle.watchesPerNode} watches/node, ${idle.kbPerMinDownPerNode} KB/min down`,
    );

    // A Deployment of PODS_PER_NODE pods per node.
    result.deployment = await deployment(plane, audit, idle.nodeIdentityRequestsByKind, kind);
    // The API server cut.
    result.outage = await outage(plane, audit, fleet, idle.nodeIdentityRequestsPerMin, kind);
    return result;
  } finally {
    log(`${kind}: stopping the fleet and the control plane`);
    await fleet?.stop();
    await plane.stop();
    cleanups.length = 0;
  }
}

async function deployment(
  plane: ControlPlane,
  audit: AuditReader,
  idleByKind: Record<string, number>,
  kind: string,
) {
  const total = NODES * PODS_PER_NODE;
  const kubectl = (args: string[], input?: string) =>
    execFileSync('kubectl', ['--kubeconfig', plane.adminKubeconfig, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(input ? { input } : {}),
    }).toString();
  kubectl(['create', 'namespace', NS]);
  await until(
    'default ServiceAccount',
    async () => {
      kubectl(['-n', NS, 'get', 'serviceaccount', 'default']);
      return true;
    },
    120_000,
  );
  const deploy = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'fleet', namespace: NS },
    spec: {
      replicas: total,
      selector: { matchLabels: { app: 'fleet' } },
      template: {
        metadata: { labels: { app: 'fleet' } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.2' }],
        },
      },
    },
  };
  const t0 = Date.now();
  kubectl(['create', '-f', '-'], JSON.stringify(deploy));
  log(`${kind}: Deployment of ${total} pods created`);
  let last = -1;
  await until(
    `${total} pods Running`,
    async () => {
      const { items } = await getJson<{ items: Pod[] }>(plane, `/api/v1/namespaces/${NS}/pods`);
      const running = items.filter(
        (p) => p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).every((c) => c.ready),
      ).length;
      if (running !== last && (running === total || Math.floor(running / 100) !== Math.floor(last / 100)))
        log(`${kind}: ${running}/${total} pods Running`);
      last = running;
      return running === total && true;
    },
    20 * 60_000,
    1_000,
  );
  const allRunning = (Date.now() - t0) / 1000;
  log(
    `${kind}: all ${total} pods Running after ${allRunning.toFixed(1)} s; 20 s for late statuses and events`,
  );
  await sleep(20_000);
  const t1 = Date.now();
  const minutes = (t1 - t0) / 60_000;
  const byKind = countBy(audit.between(t0, t1), (r) => r.key);
  // What the window holds beyond the idle rate, per pod started.
  const extra = new Map(
    [...byKind].map(
      ([k, v]) => [k, (v - (idleByKind[k] ?? 0) * NODES * minutes) / total] as [string, number],
    ),
  );
  const events = [...extra].filter(([k]) => / events$/.test(k)).reduce((a, [, v]) => a + v, 0);
  const nonEvents = [...extra].filter(([k]) => !/ events$/.test(k)).reduce((a, [, v]) => a + v, 0);
  return {
    pods: total,
    secondsToAllRunning: round(allRunning, 1),
    requestsPerPodBesidesEvents: round(nonEvents),
    eventRequestsPerPod: round(events),
    perPodByKind: obj(extra),
  };
}

async function outage(
  plane: ControlPlane,
  audit: AuditReader,
  fleet: Fleet,
  idlePerNodeMin: number,
  kind: string,
) {
  // Outpost: one pod per node restarted in place while cut off (through its local API), so each
  // node has statuses and events to deliver when the API server is back.
  const picks = new Map<string, string>();
  if (fleet.kind === 'outpost') {
    const { items } = await getJson<{ items: Pod[] }>(plane, `/api/v1/namespaces/${NS}/pods`);
    for (const p of items)
      if (p.spec?.nodeName && !picks.has(p.spec.nodeName)) picks.set(p.spec.nodeName, p.metadata!.name!);
  }
  const tCut = Date.now();
  log(`${kind}: API server stopped for ${OUTAGE} min`);
  await plane.stopApiserver();
  await sleep(Math.min(30_000, (OUTAGE * 60_000) / 4));
  let restarted = 0;
  let refused = '';
  for (const n of fleet.nodes) {
    const pod = picks.get(n.name);
    if (!pod || !n.url) continue;
    // A restart is a write: it takes the node's admin credential (callers without one are viewers).
    const r = await fetch(`${n.url}/api/v1/namespaces/${NS}/pods/${pod}/restart`, {
      method: 'POST',
      headers: adminHeaders(n.url),
    }).catch((e: Error) => e);
    if (r instanceof Response && r.ok) restarted += 1;
    else refused ||= r instanceof Response ? `${r.status} ${await r.text()}` : String(r);
  }
  if (fleet.kind === 'outpost')
    log(
      `${kind}: restarted ${restarted} of ${picks.size} pods (one per node) while cut off${refused ? `; first refusal: ${refused}` : ''}`,
    );
  await sleep(Math.max(0, tCut + OUTAGE * 60_000 - Date.now()));
  await plane.startApiserver();
  const tBack = Date.now();
  log(`${kind}: API server back; waiting for every Node Ready with a renewed Lease`);
  const names = new Set(fleet.nodes.map((n) => n.name));
  await until(
    'all Nodes Ready after the cut',
    async () => {
      const leases = await getJson<{ items: { metadata: { name: string }; spec: { renewTime?: string } }[] }>(
        plane,
        '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
      );
      const renewed = leases.items.filter(
        (l) => names.has(l.metadata.name) && Date.parse(l.spec.renewTime ?? '') >= tBack - 1000,
      ).length;
      return renewed === NODES && (await readyNodes(plane, names)) === NODES && true;
    },
    10 * 60_000,
    1_000,
  );
  const readySeconds = (Date.now() - tBack) / 1000;
  log(
    `${kind}: all Nodes Ready ${readySeconds.toFixed(1)} s after the API server was back; watching 60 s more`,
  );
  await sleep(60_000);
  const reqs = audit.between(tCut, Date.now());
  // The request rate by second after the restart, and its peak over 10 s.
  const perSecond = new Map<number, number>();
  for (const r of reqs)
    perSecond.set(
      Math.floor((r.t - tBack) / 1000),
      (perSecond.get(Math.floor((r.t - tBack) / 1000)) ?? 0) + 1,
    );
  const lastSecond = Math.max(0, ...perSecond.keys());
  let peak10 = 0;
  let stormSeconds = 0;
  const idlePerSecond = (idlePerNodeMin * NODES) / 60;
  for (let s = 0; s <= lastSecond; s++) {
    let n = 0;
    for (let j = s; j < s + 10; j++) n += perSecond.get(j) ?? 0;
    peak10 = Math.max(peak10, n / 10);
    // A second counts as a storm when the 10 s from it average above 3x the idle rate.
    if (n / 10 > 3 * idlePerSecond) stormSeconds += 1;
  }
  const lists = countBy(
    reqs.filter((r) => r.verb === 'LIST'),
    (r) => r.key,
  );
  const result: Record<string, unknown> = {
    outageMinutes: OUTAGE,
    secondsToAllReady: round(readySeconds, 1),
    peakRequestsPerSecond10s: round(peak10),
    idleRequestsPerSecond: round(idlePerSecond),
    peakOverIdle: round(peak10 / idlePerSecond),
    secondsAbove3xIdle: stormSeconds,
    listsPerNode: round(sum(lists) / NODES),
    listsPerNodeByKind: obj(perNode(lists, NODES)),
    requestsPerNodeInRecovery: round(reqs.length / NODES),
  };
  if (fleet.kind === 'outpost')
    result.delivery = { restartsAccepted: restarted, ...(await delivery(plane, fleet, picks)) };
  else
    result.delivery =
      'not counted (kubelet keeps no count of what it wrote; its event broadcaster drops events after retries)';
  return result;
}

/** For each Outpost: its outbox empty, then its pod's restart count and kubelet events as on the node and in the API. */
async function delivery(plane: ControlPlane, fleet: Fleet, picks: Map<string, string>) {
  const metric = async (url: string, name: string) => {
    const text = await fetch(`${url}/metrics`).then(
      (r) => r.text(),
      () => '',
    );
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
  };
  await until(
    'every outbox empty',
    async () => {
      for (const n of fleet.nodes)
        if ((await metric(n.url!, 'outpost_cloud_outbox_depth')) !== 0) return false;
      return true;
    },
    5 * 60_000,
    2_000,
  );
  type Ev = { involvedObject: { name?: string }; source?: { host?: string }; count?: number };
  const cloudEvents = (await getJson<{ items: Ev[] }>(plane, `/api/v1/namespaces/${NS}/events`)).items;
  const cloudPods = (await getJson<{ items: Pod[] }>(plane, `/api/v1/namespaces/${NS}/pods`)).items;
  const restarts = (p: Pod | undefined) =>
    (p?.status?.containerStatuses ?? []).reduce((a, c) => a + (c.restartCount ?? 0), 0);
  let written = 0;
  let received = 0;
  let statusesMatch = 0;
  for (const n of fleet.nodes) {
    const pod = picks.get(n.name);
    if (!pod) continue;
    const local = (await fetch(`${n.url}/api/v1/namespaces/${NS}/events`).then((r) => r.json())) as {
      items: Ev[];
    };
    const count = (evs: Ev[]) =>
      evs
        .filter((e) => e.involvedObject.name === pod && e.source?.host === n.name)
        .reduce((a, e) => a + (e.count ?? 1), 0);
    written += count(local.items);
    received += count(cloudEvents);
    const localPod = (await fetch(`${n.url}/api/v1/namespaces/${NS}/pods/${pod}`).then((r) =>
      r.json(),
    )) as Pod;
    if (
      restarts(localPod) === restarts(cloudPods.find((p) => p.metadata?.name === pod)) &&
      restarts(localPod) > 0
    )
      statusesMatch += 1;
  }
  return {
    podsRestartedWhileCut: picks.size,
    eventsWritten: written,
    eventsReceived: received,
    statusesMatching: statusesMatch,
  };
}

const work = mkdtempSync('/var/tmp/outpost-fleet-');
const summary: Record<string, unknown> = {
  nodes: NODES,
  minutes: MINUTES,
  podsPerNode: PODS_PER_NODE,
  outageMinutes: OUTAGE,
  loadAtStart: round(loadavg()[0]!, 1),
};
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.once(sig, async () => {
    log(`${sig}: stopping the fleet and the control plane`);
    for (const c of cleanups) await c().catch(() => {});
    if (!process.env.BENCH_KEEP) rmSync(work, { recursive: true, force: true });
    process.exit(130);
  });
try {
  log(`${NODES} nodes per side, ${MINUTES} min idle, work dir ${work} (load ${loadavg()[0]!.toFixed(1)})`);
  for (const side of SIDES) {
    summary[side] = await runSide(side, work);
    if (JSON_FILE) writeFileSync(JSON_FILE, `${JSON.stringify(summary, null, 2)}\n`); // kept if a later side fails
  }
  summary.loadAtEnd = round(loadavg()[0]!, 1);
  report(summary);
} finally {
  if (!process.env.BENCH_KEEP) rmSync(work, { recursive: true, force: true });
}

function report(s: Record<string, unknown>): void {
  type Side = {
    idle: Record<string, number>;
    deployment: Record<string, number>;
    outage: Record<string, number | unknown>;
    startToAllReadySeconds: number;
  };
  const o = s.outpost as Side | undefined;
  const k = s.kubelet as Side | undefined;
  const row = (what: string, get: (x: Side) => unknown, budget = '') => {
    const a = o ? Number(get(o)) : Number.NaN;
    const b = k ? Number(get(k)) : Number.NaN;
    return [what, a, b, b ? a / b : Number.NaN, budget];
  };
  console.log(
    `\nfleet: ${NODES} nodes per side, ${MINUTES} min idle, ${PODS_PER_NODE} pods per node, API server cut ${OUTAGE} min (load ${s.loadAtStart} → ${s.loadAtEnd})\n`,
  );
  printTable(
    ['per node', 'Outpost', 'kubelet (kubemark)', 'ratio', 'budget (issue 22)'],
    [
      row('start → all Nodes Ready (s, whole fleet)', (x) => x.startToAllReadySeconds),
      row('idle requests/min (metrics − control plane)', (x) => x.idle.requestsPerMinPerNode, '≤ 7'),
      row('idle requests/min (audit, node identity)', (x) => x.idle.nodeIdentityRequestsPerMin, '≤ 7'),
      row('open watches', (x) => x.idle.watchesPerNode, '≤ 5'),
      row('TCP connections', (x) => x.idle.tcpConnectionsPerNode, '1'),
      row('KB/min up', (x) => x.idle.kbPerMinUpPerNode),
      row('KB/min down', (x) => x.idle.kbPerMinDownPerNode, '≤ 10'),
      row('RSS (MB)', (x) => x.idle.rssMbPerNode),
      row('CPU (% of a core)', (x) => x.idle.cpuPercentPerNode),
      row('API-server RSS (MB)', (x) => x.idle.apiserverRssMbPerNode),
      row('all pods Running (s, whole fleet)', (x) => x.deployment.secondsToAllRunning),
      row('requests per pod started, events apart', (x) => x.deployment.requestsPerPodBesidesEvents, '≤ 6'),
      row('event requests per pod started', (x) => x.deployment.eventRequestsPerPod),
      row('after the cut: all Ready (s)', (x) => x.outage.secondsToAllReady, '≤ 60'),
      row('after the cut: peak 10-s rate / idle rate', (x) => x.outage.peakOverIdle, '≤ 3 (or ≤ 10 s above)'),
      row('after the cut: seconds above 3× idle', (x) => x.outage.secondsAbove3xIdle, '≤ 10'),
      row('after the cut: LISTs', (x) => x.outage.listsPerNode, '≤ 1 per watch'),
    ],
  );
  const d = (o?.outage as { delivery?: Record<string, number> } | undefined)?.delivery;
  if (d)
    console.log(
      `\nOutpost, written while cut off: ${d.eventsWritten} event counts on the nodes, ${d.eventsReceived} in the API server; ${d.restartsAccepted}/${d.podsRestartedWhileCut} restarts accepted by the nodes, ${d.statusesMatching} restarted pods' statuses match`,
    );
  const json = JSON.stringify(s);
  if (JSON_FILE) writeFileSync(JSON_FILE, `${JSON.stringify(s, null, 2)}\n`);
  console.log(`\n${json}`);
}
