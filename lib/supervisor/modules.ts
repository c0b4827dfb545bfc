// In-process module supervisor: BeeHive's restart policies and backoff, plus what BeeHive lacks:
// failures from a module's own callbacks (ctx.fail), health checks, a reset after a healthy run,
// per-module state for /readyz and metrics, and a FatalError path instead of os.Exit in a module.
import { setMaxListeners } from 'node:events';
import { type Clock, systemClock, type Timer, withTimeout } from '#lib/clock.ts';
import {
  BACKOFF_DEFAULTS,
  type BackoffCurve,
  type BackoffEvent,
  type BackoffOptions,
  type BackoffState,
  initialBackoffState,
  nextBackoff,
} from './backoff.ts';
import { ExitCode, FatalError } from './exit-codes.ts';

export { FatalError } from './exit-codes.ts';

export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';
export type ModuleState = 'starting' | 'running' | 'backoff' | 'failed' | 'stopped' | 'degraded';

type LogFn = (obj: object, msg?: string) => void;
/** The part of pino the supervisor uses. */
export type Logger = Record<'info' | 'warn' | 'error' | 'debug', LogFn>;

/**
 * What a module's run body gets: `signal` aborts when it must stop (then its run should settle);
 * `fail(err)` reports a failure from work it owns but does not await (timers, streams); `ready()`
 * marks it running and healthy, which starts its health checks and its backoff reset period.
 */
export interface ModuleContext {
  signal: AbortSignal;
  fail(err: unknown): void;
  ready(): void;
  log: Logger;
}

/** `check` throws or rejects when unhealthy; one slower than `intervalMs` counts as failed. */
export interface HealthProbe {
  check(): Promise<void> | void;
  intervalMs: number;
  failureThreshold: number;
}

/**
 * A supervised module. `policy`: Always restarts after any end, OnFailure only after a failure,
 * Never not at all. `onGiveUp` applies past `maxRetries` or to a failure under Never; it defaults
 * to 'exit' for `critical` modules (which also count for liveness) and 'degraded' for the rest.
 */
export interface ModuleSpec {
  name: string;
  run(ctx: ModuleContext): Promise<void>;
  policy: RestartPolicy;
  backoff?: BackoffCurve;
  resetAfterMs?: number;
  maxRetries?: number;
  onGiveUp?: 'exit' | 'degraded';
  health?: HealthProbe;
  critical?: boolean;
  /**
   * Failures that are an expected state the module reports itself (the runtime not there yet):
   * logged at debug level, without a stack, instead of at every backoff step as errors.
   */
  quiet?: (err: unknown) => boolean;
}

/** One module's state for /readyz and metrics; `since` is when it entered `state`. */
export interface ModuleSnapshot {
  name: string;
  state: ModuleState;
  critical: boolean;
  restarts: number;
  lastError?: string;
  lastErrorAt?: number;
  nextRetryAt?: number;
  since: number;
}

/**
 * `onFatal` is called once, after every module stopped, when a module threw FatalError or gave up
 * with 'exit'. `settleTimeoutMs` (default 10 s) bounds the wait for an aborted run to settle.
 */
export interface SupervisorOptions {
  log: Logger;
  clock?: Clock;
  onFatal(err: FatalError): void;
  settleTimeoutMs?: number;
}

interface Run {
  ac: AbortController;
  done: Promise<void>;
  failed: boolean;
  healthFailures: number;
  healthTimer?: Timer | undefined;
}

interface Entry {
  spec: ModuleSpec;
  opts: Required<BackoffOptions>;
  log: Logger;
  snap: ModuleSnapshot;
  bo: BackoffState;
  run?: Run;
  timer?: Timer | undefined;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

const LEVELS = ['info', 'warn', 'error', 'debug'] as const;
const withBindings = (log: Logger, b: object): Logger =>
  Object.fromEntries(LEVELS.map((l) => [l, (o: object, m?: string) => log[l]({ ...b, ...o }, m)])) as Logger;

/** Runs registered modules, restarting each by its policy with backoff; see ModuleSpec. */
export class Supervisor {
  private readonly clock: Clock;
  private readonly settleTimeoutMs: number;
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<(m: ModuleSnapshot) => void>();
  private started = false;
  private stopping: Promise<void> | undefined;
  private fatalError: FatalError | undefined;

  constructor(private readonly opts: SupervisorOptions) {
    this.clock = opts.clock ?? systemClock;
    this.settleTimeoutMs = opts.settleTimeoutMs ?? 10_000;
  }

  /** Adds a module; it starts with start(), or at once if the supervisor is already running. */
  register(spec: ModuleSpec): void {
    const { name, policy } = spec;
    if (this.entries.has(name)) throw new Error(`module "${name}" is already registered`);
    const opts = {
      ...BACKOFF_DEFAULTS,
      ...spec.backoff,
      resetAfterMs: spec.resetAfterMs ?? BACKOFF_DEFAULTS.resetAfterMs,
    };
    // Never is a retry limit of zero: the first failure goes straight to onGiveUp.
    const maxRetries = policy === 'Never' ? 0 : (spec.maxRetries ?? BACKOFF_DEFAULTS.maxRetries);
    const snap: ModuleSnapshot = {
      name,
      state: 'starting',
      critical: !!spec.critical,
      restarts: 0,
      since: this.clock.now(),
    };
    const log = withBindings(this.opts.log, { module: name });
    const e: Entry = { spec, opts: { ...opts, maxRetries }, log, snap, bo: initialBackoffState() };
    this.entries.set(name, e);
    if (this.started && !this.stopping) this.launch(e);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    for (const e of this.entries.values()) this.launch(e);
  }

  /** Aborts and awaits every module, one at a time, in reverse registration order. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const e of [...this.entries.values()].reverse()) {
        if (e.timer) this.clock.clearTimeout(e.timer);
        e.timer = undefined;
        if (e.run) {
          this.clearHealth(e.run);
          e.run.ac.abort(new Error('supervisor stopping'));
          await this.settled(e, e.run);
        }
        if (['starting', 'running', 'backoff'].includes(e.snap.state)) this.set(e, 'stopped');
      }
    })();
    return this.stopping;
  }

  /**
   * Ends a module's backoff early and starts it now (what it waited for came back, e.g. the pods
   * module when the runtime connects). The backoff streak is kept: failing again continues the
   * curve. Returns whether the module was backing off.
   */
  retryNow(name: string): boolean {
    const e = this.entries.get(name);
    if (e?.snap.state !== 'backoff' || !e.timer || this.stopping) return false;
    this.clock.clearTimeout(e.timer);
    this.relaunch(e);
    return true;
  }

  snapshot(): ModuleSnapshot[] {
    return [...this.entries.values()].map((e) => ({ ...e.snap }));
  }

  /** Subscribes to state changes of any module; returns the unsubscribe function. */
  on(_event: 'change', fn: (m: ModuleSnapshot) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private launch(e: Entry): void {
    let markDone!: () => void;
    const done = new Promise<void>((r) => (markDone = r));
    const run: Run = { ac: new AbortController(), done, failed: false, healthFailures: 0 };
    // Every call a module has in flight may listen on its signal (the pods module's CRI calls: one
    // each, removed when the call ends), so more than Node's default 10 at once is no leak: without
    // this, 20 pods starting print "MaxListenersExceededWarning: Possible EventTarget memory leak".
    setMaxListeners(0, run.ac.signal);
    e.run = run;
    this.set(e, 'starting');
    const fail = (err: unknown) => void this.fail(e, run, err);
    const ctx: ModuleContext = { signal: run.ac.signal, log: e.log, fail, ready: () => this.ready(e, run) };
    let p: Promise<void>;
    try {
      p = Promise.resolve(e.spec.run(ctx));
    } catch (err) {
      p = Promise.reject(err); // a run body that throws before returning its promise
    }
    p.then(markDone, markDone);
    p.then(
      () => this.returned(e, run),
      (err: unknown) => fail(err ?? new Error('rejected without a reason')),
    );
  }

  /** True while `run` is the module's current run and nothing has ended it yet. */
  private live(e: Entry, run: Run): boolean {
    return e.run === run && !run.failed && !run.ac.signal.aborted;
  }

  private ready(e: Entry, run: Run): void {
    if (!this.live(e, run) || e.snap.state !== 'starting') return;
    this.backoff(e, { type: 'healthy' });
    this.set(e, 'running');
    e.log.debug({ restarts: e.snap.restarts }, 'module running');
    this.scheduleHealth(e, run);
  }

  private scheduleHealth(e: Entry, run: Run): void {
    const h = e.spec.health;
    if (h) run.healthTimer = this.clock.setTimeout(() => void this.probe(e, run, h), h.intervalMs);
  }

  private async probe(e: Entry, run: Run, h: HealthProbe): Promise<void> {
    run.healthTimer = undefined;
    if (!this.live(e, run)) return;
    try {
      await withTimeout(this.clock, Promise.resolve().then(h.check), h.intervalMs);
      if (!this.live(e, run)) return;
      if (run.healthFailures > 0) e.log.info({ after: run.healthFailures }, 'health check passing again');
      run.healthFailures = 0;
      this.backoff(e, { type: 'healthy' });
    } catch (err) {
      if (!this.live(e, run)) return;
      const failures = ++run.healthFailures;
      this.backoff(e, { type: 'unhealthy' });
      if (this.quiet(e, err))
        e.log.debug(
          { error: message(err), failures, failureThreshold: h.failureThreshold },
          'health check failed',
        );
      else e.log.warn({ err, failures, failureThreshold: h.failureThreshold }, 'health check failed');
      if (failures >= h.failureThreshold) {
        const msg = `health check failed ${failures} times in a row: ${message(err)}`;
        await this.fail(e, run, new Error(msg, { cause: err }));
        return;
      }
    }
    this.scheduleHealth(e, run);
  }

  private returned(e: Entry, run: Run): void {
    if (!this.live(e, run)) return;
    this.clearHealth(run);
    run.ac.abort(new Error('module returned')); // releases whatever the module tied to its signal
    if (e.spec.policy === 'Always') {
      this.afterExit(e, undefined);
    } else {
      e.log.info({}, 'module returned');
      this.set(e, 'stopped');
    }
  }

  /** Whether a failure (or the failure it wraps) is one the module declared expected. */
  private quiet(e: Entry, err: unknown): boolean {
    const q = e.spec.quiet;
    if (!q) return false;
    return q(err) || (err instanceof Error && err.cause !== undefined && q(err.cause));
  }

  private async fail(e: Entry, run: Run, err: unknown): Promise<void> {
    if (!this.live(e, run)) return; // stale run, second report, or shutting down: first one wins
    run.failed = true;
    this.clearHealth(run);
    run.ac.abort(err);
    this.set(e, 'failed', err);
    if (err instanceof FatalError) return this.fatal(e, err);
    await this.settled(e, run);
    if (!this.stopping && e.run === run) this.afterExit(e, err);
  }

  /** The run ended (failure, or a clean return under Always): restart after backoff or give up. */
  private afterExit(e: Entry, err: unknown): void {
    const decision = this.backoff(e, { type: 'failure' });
    const what = err === undefined ? 'module returned' : 'module failed';
    const quiet = err !== undefined && this.quiet(e, err);
    const fields = {
      ...(quiet ? { error: message(err) } : { err }),
      restarts: e.snap.restarts,
      policy: e.spec.policy,
    };
    if (decision.action === 'retry') {
      const { attempt, delayMs, retryAt } = decision;
      e.log[err === undefined ? 'info' : quiet ? 'debug' : 'error'](
        { ...fields, attempt, delayMs, retryAt },
        `${what}; restarting`,
      );
      e.snap.nextRetryAt = retryAt;
      this.set(e, 'backoff');
      e.timer = this.clock.setTimeout(() => this.relaunch(e), delayMs);
      return;
    }
    const why = e.spec.policy === 'Never' ? 'policy Never' : `retry limit ${e.opts.maxRetries} reached`;
    if ((e.spec.onGiveUp ?? (e.spec.critical ? 'exit' : 'degraded')) === 'degraded') {
      e.log.error(fields, `${what}; ${why}, continuing without it`);
      this.set(e, 'degraded');
    } else {
      this.set(e, 'failed');
      const msg = `module "${e.spec.name}" gave up (${why})`;
      void this.fatal(e, new FatalError(ExitCode.ModuleGaveUp, msg, { cause: err }));
    }
  }

  private relaunch(e: Entry): void {
    e.timer = undefined;
    e.snap.restarts++;
    if (!this.stopping) this.launch(e);
  }

  private async fatal(e: Entry, err: FatalError): Promise<void> {
    if (this.fatalError) return;
    this.fatalError = err;
    e.log.error({ err, exitCode: err.exitCode }, 'fatal error; stopping all modules');
    await this.stop();
    try {
      this.opts.onFatal(err);
    } catch (cbErr) {
      this.opts.log.error({ err: cbErr }, 'onFatal threw');
    }
  }

  private backoff(e: Entry, event: BackoffEvent) {
    const { state, decision } = nextBackoff(e.bo, event, this.clock.now(), e.opts);
    e.bo = state;
    return decision;
  }

  private clearHealth(run: Run): void {
    if (run.healthTimer) this.clock.clearTimeout(run.healthTimer);
    run.healthTimer = undefined;
  }

  /** Waits for `run` to settle, at most settleTimeoutMs; logs and moves on when it does not. */
  private async settled(e: Entry, run: Run): Promise<void> {
    const ok = await withTimeout(this.clock, run.done, this.settleTimeoutMs).then(
      () => true,
      () => false,
    );
    if (!ok) e.log.warn({ timeoutMs: this.settleTimeoutMs }, 'module ignored abort; abandoning its run');
  }

  private set(e: Entry, state: ModuleState, err?: unknown): void {
    const s = e.snap;
    const now = this.clock.now();
    if (s.state !== state) s.since = now;
    s.state = state;
    if (state !== 'backoff') delete s.nextRetryAt;
    if (err !== undefined) Object.assign(s, { lastError: message(err), lastErrorAt: now });
    for (const fn of this.listeners) {
      try {
        fn({ ...s });
      } catch (err) {
        this.opts.log.warn({ err }, 'change listener threw'); // metrics must not break restarts
      }
    }
  }
}
