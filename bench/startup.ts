// npm run bench:startup — agent start → first served cached read, with the container runtime absent
// (the motivating case of issue 5: a board booting before containerd). The bundled agent is started
// RUNS times on a metabase holding 10 pods and a runtime endpoint where nothing listens; each run is
// timed from spawn to the first 200 answer to `GET /api/v1/pods`, and its CPU time to that answer
// is read from /proc (the figure a busy shared machine distorts least). The anchor measured in the
// same run is the floor: a bare `node` process answering its first HTTP request.
// BENCH_RUNS=n (default 15); BENCH_COMPARE=other.mjs measures a second bundle in the same runs.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { offlineServeArgs, printTable, rssMb, seedPods, serviceEnv, stats, stopChild } from './lib.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const PODS = 10;
const PORT = 20000 + (process.pid % 20000);
const dir = mkdtempSync(join(tmpdir(), 'outpost-bench-startup-'));

const seed = (): void => seedPods(dir, PODS);

/** Spawns `args` and polls `url` until it answers 200; the time from spawn to that answer. */
async function firstAnswer(args: string[], url: string) {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env: serviceEnv });
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  for (;;) {
    const ok = await fetch(url).then(
      async (r) => {
        await r.arrayBuffer();
        return r.ok;
      },
      () => false,
    );
    if (ok) break;
    if (child.exitCode !== null)
      throw new Error(`${args.join(' ')} exited with ${child.exitCode}:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 5)); // gently: the poller shares the machine's cores
  }
  const ms = performance.now() - t0;
  const cpu = cpuMs(child.pid!);
  // The agent's own account: process start → API listening (its `outpost serving` log line).
  const listening = Number(/"sinceProcessStartMs":(\d+)/.exec(stderr)?.[1] ?? Number.NaN);
  return { ms, listening, cpu, child };
}

/** CPU time (user + system) a process has used so far, from /proc: insensitive to a busy machine. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in USER_HZ (100)
}

const FLOOR = `require('node:http').createServer((q, s) => s.end('ok')).listen(${PORT}, '127.0.0.1')`;

/** The serve command line of a bundle. */
const serveArgs = (bundle: string) => offlineServeArgs(bundle, PORT, dir);

async function main() {
  seed();
  const url = `http://127.0.0.1:${PORT}`;
  // BENCH_COMPARE=other.mjs adds another bundle (e.g. a build of an older commit), same runs.
  const bundles = ['dist/outpost.cjs', ...(process.env.BENCH_COMPARE ? [process.env.BENCH_COMPARE] : [])];
  const first = new Map(bundles.map((b) => [b, [] as number[]]));
  const listening = new Map(bundles.map((b) => [b, [] as number[]]));
  const cpu = new Map(bundles.map((b) => [b, [] as number[]]));
  const floor: number[] = [];
  const floorCpu: number[] = [];
  let rss = Number.NaN;
  let pods = 0;
  // Interleaved, so a noisy neighbour hurts every series alike.
  for (let i = 0; i < RUNS; i++) {
    const f = await firstAnswer(['-e', FLOOR], url);
    floor.push(f.ms);
    floorCpu.push(f.cpu);
    await stopChild(f.child);
    for (const b of bundles) {
      const o = await firstAnswer(serveArgs(b), `${url}/api/v1/pods`);
      first.get(b)!.push(o.ms);
      listening.get(b)!.push(o.listening);
      cpu.get(b)!.push(o.cpu);
      if (i === RUNS - 1 && b === bundles[0]) {
        rss = rssMb(o.child.pid!);
        pods = ((await (await fetch(`${url}/api/v1/pods`)).json()) as { items: unknown[] }).items.length;
      }
      await stopChild(o.child);
    }
  }
  rmSync(dir, { recursive: true, force: true });
  const f = stats(floor, 1);
  const fc = stats(floorCpu, 1);
  console.log(
    `\nOutpost start → first cached read (runtime absent), ${RUNS} runs, ${PODS} pods, node ${process.version}, ${new Date().toISOString()}\n`,
  );
  const rows: (string | number)[][] = [];
  for (const b of bundles) {
    const o = stats(first.get(b)!, 1);
    const l = stats(listening.get(b)!, 1);
    const c = stats(cpu.get(b)!, 1);
    const name = b === bundles[0] ? '' : ` [${b}]`;
    rows.push(
      [
        `start → GET /api/v1/pods 200 (${pods} pods)${name}`,
        o.p50,
        o.p99,
        f.p50,
        o.p50 / f.p50,
        'kubelet 9500, YurtHub 2500',
        '<= 300',
      ],
      [`process start → API listening (agent log)${name}`, l.p50, l.p99, f.p50, l.p50 / f.p50, '-', '-'],
      [`CPU time to the first read${name}`, c.p50, c.p99, fc.p50, c.p50 / fc.p50, '-', '-'],
    );
  }
  rows.push(['bare node → first HTTP answer (floor)', f.p50, f.p99, f.p50, 1, '-', '-']);
  rows.push(['bare node CPU time to it (floor)', fc.p50, fc.p99, fc.p50, 1, '-', '-']);
  printTable(['what', 'p50 ms', 'p99 ms', 'floor p50 ms', 'ratio p50', 'anchor', 'target'], rows);
  console.log(`\nRSS right after the first read, runtime absent: ${rss.toFixed(1)} MB`);
}

await main();
