// One probe of one container instance, run periodically as kubelet's prober worker runs it
// (pkg/kubelet/prober/worker.go): results count only after successThreshold / failureThreshold
// consecutive equal results, errored probes are thrown away, and a liveness or startup probe that
// reaches its failure threshold holds (probes no more) until the container is replaced.
import type { Clock, Timer } from '#lib/clock.ts';
import type { K8sProbe, ProbeOutcome, ProbeResult, ProbeTarget, ProbeType } from './run.ts';
import { positive, runProbe } from './run.ts';

/** A result as the worker publishes it. */
export interface ProbeResultChange {
  type: ProbeType;
  containerName: string;
  result: ProbeResult;
  output: string;
  consecutiveFailures: number;
}

/** One probe run (after kubelet's up-to-3 immediate retries of an errored probe). */
export interface ProbeAttempt {
  type: ProbeType;
  containerName: string;
  outcome: ProbeOutcome;
}

export interface ProbeWorkerOptions {
  type: ProbeType;
  containerName: string;
  probe: K8sProbe;
  target: ProbeTarget;
  clock: Clock;
  /** When the container started (epoch ms); initialDelaySeconds counts from here. Default: now. */
  startedAt?: number;
  /** Whether to probe on this tick; liveness and readiness wait for the startup probe. */
  gate?: () => boolean;
  /** The published result flipped. */
  onResult?: (change: ProbeResultChange) => void;
  /** A liveness or startup probe reached failureThreshold: the container is to be restarted. */
  onFailureThreshold?: (change: ProbeResultChange) => void;
  /** Every probe run, for events (`Unhealthy`, `ProbeWarning`). */
  onProbe?: (attempt: ProbeAttempt) => void;
  /** One of the callbacks above threw; probing goes on. */
  onError?: (err: unknown) => void;
}

const MAX_PROBE_RETRIES = 3; // kubelet's maxProbeRetries, for errored probes only

/** Probes one container instance every periodSeconds and publishes the result kubelet would. */
export class ProbeWorker {
  readonly type: ProbeType;
  readonly containerName: string;
  private readonly opts: ProbeWorkerOptions;
  private readonly periodMs: number;
  private readonly firstAt: number;
  private readonly successThreshold: number;
  private readonly failureThreshold: number;
  private state: ProbeResult;
  private lastOutput = '';
  private last: ProbeResult | undefined;
  private run = 0;
  private failures = 0;
  private onHold = false;
  private stopped = false;
  private timer: Timer | undefined;
  private inflight: AbortController | undefined;

  constructor(opts: ProbeWorkerOptions) {
    this.opts = opts;
    this.type = opts.type;
    this.containerName = opts.containerName;
    const p = opts.probe;
    this.periodMs = positive(p.periodSeconds, 10) * 1000;
    // The API server rejects successThreshold != 1 for liveness and startup; treat it as 1.
    this.successThreshold = opts.type === 'readiness' ? positive(p.successThreshold, 1) : 1;
    this.failureThreshold = positive(p.failureThreshold, 3);
    // kubelet's initial values: not ready until a success, alive until proven dead, and not
    // started (unknown) until the startup probe succeeds.
    this.state = opts.type === 'readiness' ? 'failure' : opts.type === 'liveness' ? 'success' : 'unknown';
    const delayMs = Math.max(0, Math.floor(p.initialDelaySeconds ?? 0)) * 1000;
    this.firstAt = (opts.startedAt ?? opts.clock.now()) + delayMs;
    this.schedule(this.firstAt - opts.clock.now());
  }

  /** The published result: `unknown` only for a startup probe that has not yet decided. */
  get result(): ProbeResult {
    return this.state;
  }

  /** The output of the probe run that set the published result. */
  get output(): string {
    return this.lastOutput;
  }

  get consecutiveFailures(): number {
    return this.failures;
  }

  /** Whether the worker has nothing left to do (stopped, held, or startup succeeded). */
  get idle(): boolean {
    return this.stopped || this.onHold || (this.type === 'startup' && this.state === 'success');
  }

  /** Probes now instead of at the next tick (kubelet's manual trigger), unless before the initial delay. */
  trigger(): void {
    if (this.idle || this.inflight || this.opts.clock.now() < this.firstAt) return;
    if (this.timer) this.opts.clock.clearTimeout(this.timer);
    void this.tick();
  }

  /** Stops probing; a probe in flight is cancelled and reports nothing. */
  stop(): void {
    this.stopped = true;
    if (this.timer) this.opts.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.inflight?.abort();
  }

  private schedule(ms: number): void {
    this.timer = this.opts.clock.setTimeout(() => void this.tick(), Math.max(0, ms));
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    if (this.idle || this.inflight) return;
    const began = this.opts.clock.now();
    try {
      if (this.opts.gate?.() ?? true) await this.probe();
    } catch (err) {
      // A throwing callback must neither stop the probing nor become an unhandled rejection.
      this.opts.onError?.(err);
    } finally {
      // Like kubelet's ticker: the next run is a period after this one began, or at once if overdue.
      if (!this.idle) this.schedule(began + this.periodMs - this.opts.clock.now());
    }
  }

  private async probe(): Promise<void> {
    const { probe, target, clock } = this.opts;
    const ac = new AbortController();
    this.inflight = ac;
    let outcome: ProbeOutcome = { result: 'unknown', output: '' };
    try {
      for (let i = 0; i < MAX_PROBE_RETRIES && !this.stopped; i++) {
        outcome = await runProbe(probe, target, ac.signal, clock);
        if (outcome.result !== 'unknown') break;
      }
    } finally {
      this.inflight = undefined;
    }
    if (this.stopped) return;
    this.opts.onProbe?.({ type: this.type, containerName: this.containerName, outcome });
    this.record(outcome);
  }

  private record({ result, output }: ProbeOutcome): void {
    if (result === 'unknown') return; // kubelet: "Prober error, throw away the result"
    this.failures = result === 'failure' ? this.failures + 1 : 0;
    if (result === this.last) this.run++;
    else {
      this.last = result;
      this.run = 1;
    }
    const threshold = result === 'failure' ? this.failureThreshold : this.successThreshold;
    if (this.run < threshold) return;
    const flipped = this.state !== result;
    this.state = result;
    this.lastOutput = output;
    const change: ProbeResultChange = {
      type: this.type,
      containerName: this.containerName,
      result,
      output,
      consecutiveFailures: this.failures,
    };
    if (result === 'failure' && this.type !== 'readiness') {
      this.onHold = true;
      this.run = 0;
    }
    if (flipped) this.opts.onResult?.(change);
    if (this.onHold) this.opts.onFailureThreshold?.(change);
  }
}
