// `outpost serve`: the node agent as a process. Exits 0 after SIGTERM/SIGINT once shut down
// gracefully, or with a module's FatalError code (never restartable configuration codes 2/3 are
// raised before anything runs; see lib/supervisor/exit-codes.ts).
import { type Agent, startAgent } from '#lib/agent.ts';
import { resolveServeConfig } from '#lib/config.ts';
import { createLogger, type Logger } from '#lib/log.ts';
import { ExitCode, type FatalError } from '#lib/supervisor/exit-codes.ts';
import type { SignalSource } from '#lib/supervisor/process.ts';

export interface ServeOptions {
  /** Ends the process (default process.exit); tests pass their own. */
  exit?: (code: number) => void;
  /** Where SIGTERM/SIGINT come from (default process). */
  signals?: SignalSource;
  log?: Logger;
  /** A graceful shutdown taking longer than this exits anyway, with code 1 (default 30 s). */
  shutdownTimeoutMs?: number;
  /** Called once the start's code has run (AgentOptions.onWarm). */
  onWarm?: () => void;
}

/** Starts the agent and wires shutdown: signals stop it gracefully, a fatal module error exits with its code. */
export async function serve(flags: Record<string, unknown>, o: ServeOptions = {}): Promise<Agent> {
  const config = resolveServeConfig(flags);
  const log = o.log ?? createLogger(config.logLevel);
  const production = o.exit === undefined;
  const exit = o.exit ?? ((code: number) => process.exit(code));
  const signals = o.signals ?? process;
  const timeoutMs = o.shutdownTimeoutMs ?? 30_000;
  let agent: Agent | undefined;
  let early: FatalError | undefined;
  let stopping = false;

  const stop = (code: number) => {
    stopping = true;
    const timer = setTimeout(() => {
      log.error({ timeoutMs }, 'graceful shutdown timed out; exiting');
      exit(code || ExitCode.Crash);
    }, timeoutMs);
    timer.unref();
    agent!.close().then(
      () => {
        clearTimeout(timer);
        exit(code);
      },
      (err: unknown) => {
        clearTimeout(timer);
        log.error({ err }, 'shutdown failed');
        exit(code || ExitCode.Crash);
      },
    );
  };
  // The supervisor has stopped every module when this runs; what is left is the API and the metabase.
  const onFatal = (err: FatalError) => {
    if (!agent) {
      early = err;
      return;
    }
    if (stopping) return;
    log.error({ err, exitCode: err.exitCode }, `fatal: ${err.message}; stopping`);
    stop(err.exitCode);
  };
  if (production) {
    // Crashes still end the process (a supervisor restarts it), but as a JSON log line first.
    process.on('uncaughtException', (err) => {
      log.error({ err }, 'uncaught exception; exiting');
      exit(ExitCode.Crash);
    });
    process.on('unhandledRejection', (err) => {
      log.error({ err }, 'unhandled promise rejection; exiting');
      exit(ExitCode.Crash);
    });
  }
  // Listened for before the agent starts: the API answers while the later parts still load, and
  // a signal then is kept until the agent is there to stop gracefully.
  let pending: NodeJS.Signals | undefined;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    signals.on(signal, () => {
      if (stopping || (!agent && pending)) {
        log.warn({ signal }, 'second signal during shutdown; exiting now');
        exit(ExitCode.Crash);
        return;
      }
      log.info({ signal }, 'shutting down');
      if (agent) stop(ExitCode.Ok);
      else pending = signal;
    });
  }
  agent = await startAgent(config, log, { onFatal, ...(o.onWarm ? { onWarm: o.onWarm } : {}) });
  if (early) onFatal(early);
  if (pending && !stopping) stop(ExitCode.Ok);
  return agent;
}
