// `outpost supervise -- <serve flags>`: keeps one `outpost serve` child alive with the module
// backoff curve, for boards without systemd. A restart cannot fix a configuration exit code, so
// those (and exit 0) end supervision; SIGTERM/SIGINT are forwarded and end it with the child's code.
import { type ChildProcess, spawn as nodeSpawn } from 'node:child_process';
import { constants } from 'node:os';
import { type Clock, systemClock, type Timer } from '#lib/clock.ts';
import { type BackoffOptions, initialBackoffState, nextBackoff } from './backoff.ts';
import { CONFIG_EXIT_CODES } from './exit-codes.ts';
import type { Logger } from './modules.ts';

export type SpawnFn = (
  command: string,
  args: string[],
  opts: { stdio: 'inherit'; detached: boolean },
) => ChildProcess;

/** Where shutdown signals come from; `process` in production, an EventEmitter in tests. */
export interface SignalSource {
  on(signal: 'SIGTERM' | 'SIGINT', fn: () => void): unknown;
  off(signal: 'SIGTERM' | 'SIGINT', fn: () => void): unknown;
}

export interface SuperviseProcessOptions {
  command: string;
  args: string[];
  /** Curve, `resetAfterMs` (the child counts as healthy while it runs) and optional `maxRetries`. */
  backoff?: BackoffOptions;
  clock?: Clock;
  log: Logger;
  spawn?: SpawnFn;
  signals?: SignalSource;
  /** Exit codes that end supervision instead of restarting; default the configuration codes. */
  noRestartCodes?: ReadonlySet<number>;
}

const FORWARDED = ['SIGTERM', 'SIGINT'] as const;

/** Shell convention for "killed by signal N": 128 + N. */
const signalExitCode = (signal: NodeJS.Signals): number => 128 + (constants.signals[signal] ?? 0);

/** Runs the child until it exits 0, exits with a configuration code, gives up, or we are signalled. */
export function superviseProcess(opts: SuperviseProcessOptions): Promise<number> {
  const clock = opts.clock ?? systemClock;
  const spawn: SpawnFn = opts.spawn ?? nodeSpawn;
  const signals: SignalSource = opts.signals ?? process;
  const noRestart = opts.noRestartCodes ?? CONFIG_EXIT_CODES;
  const { log } = opts;

  return new Promise<number>((resolve) => {
    let child: ChildProcess | undefined;
    let timer: Timer | undefined;
    let bo = initialBackoffState();
    let shuttingDown = false;
    let lastCode = 0;
    let restarts = 0;

    const handlers = FORWARDED.map((signal) => {
      const handler = () => {
        shuttingDown = true;
        if (child) {
          log.info({ signal, childPid: child.pid }, 'forwarding signal to child');
          child.kill(signal);
        } else {
          log.info({ signal, exitCode: lastCode }, 'signal while no child runs; exiting');
          finish(lastCode);
        }
      };
      signals.on(signal, handler);
      return [signal, handler] as const;
    });

    function finish(code: number): void {
      for (const [signal, handler] of handlers) signals.off(signal, handler);
      if (timer) clock.clearTimeout(timer);
      timer = undefined;
      resolve(code);
    }

    function start(): void {
      timer = undefined;
      const startedAt = clock.now();
      // Own process group: a terminal's Ctrl-C reaches only us, and the child gets the signal once.
      let c: ChildProcess;
      try {
        c = spawn(opts.command, opts.args, { stdio: 'inherit', detached: true });
      } catch (err) {
        exited(null, null, 0, err as Error); // invalid arguments: counts as a crash
        return;
      }
      child = c;
      // A running child counts as healthy: after resetAfterMs of uptime the curve starts over.
      bo = nextBackoff(bo, { type: 'healthy' }, startedAt, opts.backoff).state;
      log.info({ childPid: c.pid, restarts, command: opts.command }, 'child started');
      let ended = false;
      const end = (code: number | null, signal: NodeJS.Signals | null, err?: Error) => {
        if (ended) return;
        ended = true;
        child = undefined;
        exited(code, signal, clock.now() - startedAt, err);
      };
      c.once('exit', (code, signal) => end(code, signal));
      c.on('error', (err) => {
        // 'error' also fires when kill() fails; only a child that never got a pid has ended.
        if (c.pid === undefined) end(null, null, err);
        else log.warn({ err, childPid: c.pid }, 'child process error');
      });
    }

    function exited(code: number | null, signal: NodeJS.Signals | null, uptimeMs: number, err?: Error): void {
      const exitCode = code ?? (signal ? signalExitCode(signal) : 127);
      lastCode = exitCode;
      const fields = { exitCode, signal, uptimeMs, err };
      const configError = code !== null && code !== 0 && noRestart.has(code);
      if (shuttingDown || code === 0 || configError) {
        const why = shuttingDown
          ? 'after a forwarded signal'
          : configError
            ? 'with a configuration error'
            : 'cleanly';
        log[configError ? 'error' : 'info'](fields, `child exited ${why}; not restarting`);
        finish(exitCode);
        return;
      }
      const next = nextBackoff(bo, { type: 'failure' }, clock.now(), opts.backoff);
      bo = next.state;
      if (next.decision.action !== 'retry') {
        log.error({ ...fields, restarts }, 'child keeps crashing; retry limit reached');
        finish(exitCode);
        return;
      }
      const { attempt, delayMs, retryAt } = next.decision;
      restarts++;
      log.warn({ ...fields, restarts, attempt, delayMs, retryAt }, 'child crashed; restarting after backoff');
      timer = clock.setTimeout(start, delayMs);
    }

    start();
  });
}
