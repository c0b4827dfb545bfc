// npm run bench:runtimes — the same bundle on Node, Deno and Bun: start → first cached read, CPU time
// to it, and resident memory once idle, with the container runtime absent (as bench:startup) on a
// metabase holding 10 pods. Each runtime's anchor, measured in the same runs, is a bare HTTP server
// on that runtime (node:http answering `ok`): its first answer and its idle RSS.
// BENCH_RUNS=n (default 7), BENCH_IDLE_MS (default 5000): how long a process idles before its RSS.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { offlineServeArgs, printTable, rssMb, seedPods, stats, stopChild } from './lib.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 5000);
const PODS = 10;
const PORT = 20000 + (process.pid % 20000);
const root = resolve(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'outpost-bench-runtimes-'));
const floorScript = join(dir, 'floor.mjs');
writeFileSync(
  floorScript,
  `import { createServer } from 'node:http';\ncreateServer((q, s) => s.end('ok')).listen(${PORT}, '127.0.0.1');\n`,
);

const RUNTIMES: Record<string, string[]> = {
  node: [process.execPath],
  deno: [join(root, 'node_modules/.bin/deno'), 'run', '-A'],
  bun: [join(root, 'node_modules/.bin/bun')],
};

const seed = (): void => seedPods(dir, PODS);

/** CPU time (user + system) a process has used so far, from /proc. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** Spawns the command, polls `url` until it answers 200, idles, then reads RSS; stops it. */
async function measure(cmd: string[], url: string) {
  const t0 = performance.now();
  const [bin, ...args] = cmd;
  const child: ChildProcess = spawn(bin!, args, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  for (;;) {
    const ok = await fetch(url).then(
      async (r) => (await r.arrayBuffer()) && r.ok,
      () => false,
    );
    if (ok) break;
    if (child.exitCode !== null)
      throw new Error(`${cmd.join(' ')} exited with ${child.exitCode}:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  const ms = performance.now() - t0;
  const cpu = cpuMs(child.pid!);
  await new Promise((r) => setTimeout(r, IDLE_MS));
  const rss = rssMb(child.pid!);
  await stopChild(child);
  return { ms, cpu, rss };
}

// Each runtime's entry: Node's CommonJS one, the ES module one for Deno and Bun (docs/runtimes.md).
const serve = (runtime: string) =>
  offlineServeArgs(runtime === 'node' ? 'dist/outpost.cjs' : 'dist/outpost.mjs', PORT, dir);

async function main() {
  seed();
  const url = `http://127.0.0.1:${PORT}`;
  const names = Object.keys(RUNTIMES);
  const series = (kind: string) => new Map(names.map((n) => [`${n}/${kind}`, [] as number[]]));
  const first = series('first');
  const cpu = series('cpu');
  const rss = series('rss');
  const floor = { ms: series('floor'), rss: series('floor-rss') };
  // Interleaved, so a noisy neighbour hurts every series alike.
  for (let i = 0; i < RUNS; i++) {
    for (const n of names) {
      for (const [what, args, path] of [
        ['floor', [floorScript], '/'],
        ['outpost', serve(n), '/api/v1/pods'],
      ] as const) {
        const m = await measure([...RUNTIMES[n]!, ...args], url + path);
        if (what === 'outpost') {
          first.get(`${n}/first`)!.push(m.ms);
          cpu.get(`${n}/cpu`)!.push(m.cpu);
          rss.get(`${n}/rss`)!.push(m.rss);
        } else {
          floor.ms.get(`${n}/floor`)!.push(m.ms);
          floor.rss.get(`${n}/floor-rss`)!.push(m.rss);
        }
      }
    }
  }
  rmSync(dir, { recursive: true, force: true });
  const p50 = (xs: number[]) => stats(xs, 1).p50;
  const version = (n: string) =>
    /\d+\.\d+\.\d+/.exec(
      spawnSync(RUNTIMES[n]![0]!, ['--version'], { encoding: 'utf8' }).stdout ?? '',
    )?.[0] ?? '?';
  console.log(
    `\nOutpost on each runtime: start → first cached read (runtime absent, ${PODS} pods), RSS after ${IDLE_MS} ms idle; ${RUNS} runs, ${new Date().toISOString()}\n`,
  );
  const rows = names.map((n) => {
    const f = p50(first.get(`${n}/first`)!);
    const ff = p50(floor.ms.get(`${n}/floor`)!);
    const r = p50(rss.get(`${n}/rss`)!);
    const fr = p50(floor.rss.get(`${n}/floor-rss`)!);
    return [`${n} ${version(n)}`, f, ff, f / ff, p50(cpu.get(`${n}/cpu`)!), r, fr, r / fr];
  });
  printTable(
    [
      'runtime',
      'first read p50 ms',
      'bare http p50 ms',
      'ratio',
      'CPU to it ms',
      'RSS idle MB',
      'bare http RSS MB',
      'ratio',
    ],
    rows,
  );
}

await main();
