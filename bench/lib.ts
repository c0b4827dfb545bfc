import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import { openMetabase } from '#db/open.ts';
import { SMALL_BOARD_FLAGS, SMALL_MALLOC_ENV } from '#lib/cli/supervise.ts';
import type { Pod } from '#lib/kube/types.ts';
import { createStore } from '#lib/store/index.ts';

/**
 * The environment a systemd service starts with: not the shell's, only PATH and the unit's own
 * variables. The benches run the agent and its bare-node anchors in it, keeping from theirs only
 * PATH, HOME and XDG_CACHE_HOME (where the serve script's code cache is, as CACHE_DIRECTORY is in
 * the unit), TMPDIR, LANG and OUTPOST_*. Among what it leaves out: NODE_OPTIONS, and
 * NODE_EXTRA_CA_CERTS, which this project's build machines set: with it every Node process parses
 * about 140 certificates before its first line runs (+1.7 MB of RSS and about 25 ms for a bare
 * server, docs/performance.md), which a board's service never does.
 */
export const serviceEnv: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => ['PATH', 'HOME', 'XDG_CACHE_HOME', 'TMPDIR', 'LANG'].includes(k) || k.startsWith('OUTPOST_'),
  ),
);

/**
 * The agent's node flags and malloc settings as deploy/outpost.service and `outpost supervise` run
 * it: their V8 sizes (BENCH_NODE_FLAGS replaces them, empty for none) and malloc settings
 * (BENCH_MALLOC=glibc leaves glibc's defaults). `agentEnv` is the service's environment with them.
 */
export const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? SMALL_BOARD_FLAGS.join(' '))
  .split(' ')
  .filter(Boolean);
export const MALLOC_ENV: Record<string, string> =
  process.env.BENCH_MALLOC === 'glibc' ? {} : SMALL_MALLOC_ENV;
export const agentEnv = { ...serviceEnv, ...MALLOC_ENV };
/** Says the settings above, for a bench's heading. */
export const AGENT_SETTINGS = `agent node flags: ${NODE_FLAGS.join(' ') || 'none'}, malloc: ${
  Object.entries(MALLOC_ENV)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ') || 'glibc defaults'
}`;

/** Latency statistics in milliseconds. */
export interface Stats {
  n: number;
  min: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
  perSecond: number;
}

export function stats(samplesMs: number[], wallMs: number): Stats {
  const s = [...samplesMs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  return {
    n: s.length,
    min: s[0]!,
    p50: q(0.5),
    p99: q(0.99),
    max: s[s.length - 1]!,
    mean: s.reduce((a, b) => a + b, 0) / s.length,
    perSecond: (s.length / wallMs) * 1000,
  };
}

/** Times `fn` `n` times in a row, in this process. */
export function timeSync(n: number, fn: () => void): Stats {
  const samples: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    fn();
    samples.push(performance.now() - t);
  }
  return stats(samples, performance.now() - t0);
}

/** Sends `n` GETs over `connections` keep-alive connections and times each. */
export async function load(
  url: string,
  path: string,
  n: number,
  connections: number,
  headers: Record<string, string> = {},
): Promise<Stats> {
  const pool = new Pool(url, { connections, pipelining: 1 });
  const samples: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < n) {
      next++;
      const t = performance.now();
      const res = await pool.request({ method: 'GET', path, headers });
      await res.body.arrayBuffer();
      if (res.statusCode !== 200) throw new Error(`${path}: HTTP ${res.statusCode}`);
      samples.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  const wall = performance.now() - t0;
  await pool.close();
  return stats(samples, wall);
}

/** Resident memory of a process in MB, from /proc. */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/**
 * CPU time a process has used so far (user + system) in seconds, from /proc. Fields 14 and 15 of
 * /proc/PID/stat, counted after the command name (which may hold spaces), in clock ticks of 1/100 s
 * (Linux's USER_HZ on every architecture Outpost runs on).
 */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * Starts a process and resolves once GET url+path answers 200, with the time that took. A process
 * that exits first rejects with its exit code as `exitCode` (onFreePort retries a listen failure).
 */
export async function startAndWait(
  cmd: string,
  args: string[],
  url: string,
  path = '/readyz',
  env = process.env,
) {
  const t0 = performance.now();
  const child: ChildProcess = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'], env });
  for (;;) {
    try {
      // Bounded: a process that took the port may accept and never answer.
      const res = await fetch(url + path, { signal: AbortSignal.timeout(5000) });
      if (res.ok) break;
    } catch {}
    if (child.exitCode !== null)
      throw Object.assign(new Error(`${cmd} exited with ${child.exitCode}`), { exitCode: child.exitCode });
    await new Promise((r) => setTimeout(r, 2));
  }
  return { child, readyMs: performance.now() - t0 };
}

const fmt = (v: number, d = 2) => (Number.isFinite(v) ? v.toFixed(d) : '-');

/** The median of `xs` (the upper one of an even count). */
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** `median (min-max)` of `xs` with `d` decimals; a single value alone. */
export const spread = (xs: number[], d = 2) =>
  xs.length > 1
    ? `${fmt(median(xs), d)} (${fmt(Math.min(...xs), d)}-${fmt(Math.max(...xs), d)})`
    : fmt(xs[0]!, d);

/** Prints rows as an aligned table. */
export function printTable(header: string[], rows: (string | number)[][]): void {
  const cells = [header, ...rows.map((r) => r.map((c) => (typeof c === 'number' ? fmt(c) : c)))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => String(r[i]).length)));
  for (const r of cells)
    console.log(
      r
        .map((c, i) => String(c).padEnd(widths[i]! + 2))
        .join('')
        .trimEnd(),
    );
}

/** Writes `count` manifest pods `web-N` (busybox, node `bench`) into a new metabase in `dir`. */
export function seedPods(dir: string, count: number): void {
  const mb = openMetabase(dir);
  const store = createStore(mb, { host: 'bench' });
  for (let i = 0; i < count; i++) {
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `web-${i}`, namespace: 'default', labels: { app: 'web' } },
      spec: { nodeName: 'bench', containers: [{ name: 'main', image: 'outpost.local/busybox:latest' }] },
    };
    store.pods.put(pod, 'manifest');
  }
  mb.close();
}

/** Stops `child` with `signal` and waits for its exit (at once if it is gone already; SIGKILL after 30 s). */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  // A process that outlives its signal by 30 s is killed, and said so: a bench never waits forever.
  const kill = setTimeout(() => {
    process.stderr.write(`bench: pid ${child.pid} still running 30 s after ${signal}; SIGKILL\n`);
    child.kill('SIGKILL');
  }, 30_000);
  await exited;
  clearTimeout(kill);
}

/**
 * The serve command line of `bundle` for the offline read path: node `bench`, data in `dir`, and
 * no container runtime (the runtime and pods modules back off quietly while reads are served).
 */
export const offlineServeArgs = (bundle: string, port: number, dir: string, logLevel = 'info') => [
  bundle,
  'serve',
  '--listen',
  `127.0.0.1:${port}`,
  '--data-dir',
  dir,
  '--node-name',
  'bench',
  '--runtime-endpoint',
  `unix://${join(dir, 'no-containerd.sock')}`,
  '--log-level',
  logLevel,
];
