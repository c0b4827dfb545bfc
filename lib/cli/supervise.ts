// `outpost supervise -- <serve flags>`: keeps `outpost serve` running on boards without systemd
// (see docs/health.md for which to use). The child is this same entry file run by this same node,
// so a bundled install supervises the bundle and a source checkout (tsx) supervises the source.
import { createLogger, type LogLevel } from '#lib/log.ts';
import { type RuntimeName, runtime } from '#lib/runtime.ts';
import type { BackoffOptions } from '#lib/supervisor/backoff.ts';
import { superviseProcess } from '#lib/supervisor/process.ts';

/**
 * The command line of `outpost serve <serveArgs>` with this process's runtime (node, deno or bun),
 * flags and entry file.
 */
export function serveCommandLine(
  serveArgs: readonly string[],
  rt: RuntimeName = runtime,
): { command: string; args: string[] } {
  const entry = process.argv[1];
  if (!entry) throw new Error('cannot tell which file runs outpost (process.argv[1] is empty)');
  // Node flags carry over (tsx's --import, memory limits); an inspector port would clash. Deno
  // tells none of its own (execArgv is empty): the child gets `run -A`, as the documented command.
  const execArgv = rt === 'deno' ? ['run', '-A'] : process.execArgv.filter((a) => !/^--inspect/.test(a));
  return { command: process.execPath, args: [...execArgv, entry, 'serve', ...serveArgs] };
}

/** Runs `outpost serve` under superviseProcess; resolves with the exit code supervision ends with. */
export async function supervise(
  serveArgs: readonly string[],
  o: { logLevel?: LogLevel; backoff?: BackoffOptions } = {},
): Promise<number> {
  if (serveArgs[0] === 'serve') serveArgs = serveArgs.slice(1); // `supervise -- serve --flags` works too
  const log = createLogger(o.logLevel ?? 'info').child({ component: 'supervise' });
  const { command, args } = serveCommandLine(serveArgs);
  log.info({ command, args }, 'supervising outpost serve');
  return superviseProcess({ command, args, log, ...(o.backoff ? { backoff: o.backoff } : {}) });
}
