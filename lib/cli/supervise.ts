// `outpost supervise -- <serve flags>`: keeps `outpost serve` running on boards without systemd
// (see docs/health.md for which to use). The child is this same entry file run by this same node,
// so a bundled install supervises the bundle and a source checkout (tsx) supervises the source.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, type LogLevel } from '#lib/log.ts';
import { type RuntimeName, runtime } from '#lib/runtime.ts';
import type { BackoffOptions } from '#lib/supervisor/backoff.ts';
import { superviseProcess } from '#lib/supervisor/process.ts';
import { flagSetting } from './builtin-flags.ts';

/**
 * V8 settings for a small board, as deploy/outpost.service sets them (docs/performance.md): 1 MB
 * semi-spaces instead of 16 (the young generation's RSS falls from 8 MB to 2), an old generation
 * capped at 128 MB, about three times what 100 pods use, so the collector works before the heap
 * grows, no TurboFan (V8's optimizing compiler: its code and what it compiles cost about 2 MB
 * at 20 pods and 3 MB idle; the read path stays within issue 13's latency targets at a quarter of
 * the peak throughput, and the agent's CPU at 20 pods does not rise), and the code of functions not
 * run lately dropped sooner (Sparkplug's baseline code with their bytecode, after two full
 * collections unused instead of five: about 1.5 MB less at 20 and 100 pods; a function run again
 * is compiled again, a few milliseconds on the first request after a quiet spell), and the heap
 * sized for memory rather than speed (`--optimize-for-size`: after a full collection the old
 * generation may grow by 2 MB before the next instead of 8, so at 20 pods it settles about 6 MB
 * lower, for a little more collecting; docs/performance.md#the-heap-after-the-first-minute), and
 * compacted at every full collection (`--compact-on-every-full-gc`: the pages the collection left
 * sparse are emptied and given back, about 1 MB less at 20 pods for a few % more CPU and 10 ms
 * more to the first read;
 * docs/performance.md#compacting-at-every-full-collection), with the old generation's first limit
 * at 12 MB (`--initial-old-space-size=12`: under `--optimize-for-size` V8 started with a limit the
 * start's own 8 MB reached, and ran a full, compacting collection right before the first answer,
 * 7-12 ms; docs/performance.md#nodes-entry-without-the-es-module-loader-node-20-x64-2026-11-28-thirteenth-pass).
 */
export const SMALL_BOARD_FLAGS = [
  '--max-semi-space-size=1',
  '--max-old-space-size=128',
  '--no-opt',
  '--flush-baseline-code',
  '--bytecode-old-age=2',
  '--optimize-for-size',
  '--compact-on-every-full-gc',
  '--initial-old-space-size=12',
] as const;

/**
 * glibc malloc for a long-running agent, as deploy/outpost.service sets it (docs/performance.md):
 * a fixed mmap threshold of 32 KiB. V8 compiles the bundle in 32 KiB zone segments; with glibc's
 * default (a threshold that rises to 32 MiB) they land in the main heap, and once freed stay
 * resident behind whatever is allocated after them: about 25 MB of RSS that is free memory. Above
 * the threshold a block is mapped on its own and unmapped when freed.
 */
export const SMALL_MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: '32768' } as const;

/**
 * The environment `outpost supervise` gives its child, set on `env` (its own, which the child
 * inherits) where the caller has not chosen: the malloc settings above and a compile cache.
 */
export function childEnvDefaults(env: NodeJS.ProcessEnv, tmp = tmpdir()): void {
  for (const [k, v] of Object.entries(SMALL_MALLOC_ENV)) env[k] ??= v;
  // Node >= 22.1 keeps the bundle's compiled code here, so a restart skips most of compiling it
  // (docs/performance.md); older Node ignores the variable.
  env.NODE_COMPILE_CACHE ??= join(tmp, 'node-compile-cache');
}

/**
 * The command line of `outpost serve <serveArgs>` with this process's runtime (node, deno or bun),
 * flags and entry file.
 */
export function serveCommandLine(
  serveArgs: readonly string[],
  rt: RuntimeName = runtime,
  nodeOptions = process.env.NODE_OPTIONS ?? '',
): { command: string; args: string[] } {
  const entry = process.argv[1];
  if (!entry) throw new Error('cannot tell which file runs outpost (process.argv[1] is empty)');
  // Node flags carry over (tsx's --import, memory limits); an inspector port would clash. Deno
  // tells none of its own (execArgv is empty): the child gets `run -A`, as the documented command.
  const execArgv = rt === 'deno' ? ['run', '-A'] : process.execArgv.filter((a) => !/^--inspect/.test(a));
  // On Node, the small-board settings, unless the supervisor's own node flags or NODE_OPTIONS choose them.
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].map(flagSetting));
  const small = rt === 'node' ? SMALL_BOARD_FLAGS.filter((f) => !given.has(flagSetting(f))) : [];
  return { command: process.execPath, args: [...small, ...execArgv, entry, 'serve', ...serveArgs] };
}

/** Runs `outpost serve` under superviseProcess; resolves with the exit code supervision ends with. */
export async function supervise(
  serveArgs: readonly string[],
  o: { logLevel?: LogLevel; backoff?: BackoffOptions } = {},
): Promise<number> {
  if (serveArgs[0] === 'serve') serveArgs = serveArgs.slice(1); // `supervise -- serve --flags` works too
  const log = createLogger(o.logLevel ?? 'info').child({ component: 'supervise' });
  const { command, args } = serveCommandLine(serveArgs);
  childEnvDefaults(process.env);
  log.info({ command, args }, 'supervising outpost serve');
  return superviseProcess({ command, args, log, ...(o.backoff ? { backoff: o.backoff } : {}) });
}
