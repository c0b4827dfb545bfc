// How late the event loop runs timers: the figures behind `nodejs_eventloop_lag_*` (lib/metrics.ts).
// Node's `perf_hooks.monitorEventLoopDelay` samples every 10 ms from a native timer into a 360 KiB
// histogram, which cost a quarter of the agent's CPU at 20 pods (2.5 against 3.4 % of a core,
// docs/performance.md). This samples with one unref'd timer, 10 times a second by default, into a
// fixed ring of the latest delays: a stall of the loop delays the next tick, so any stall longer
// than the interval shows; shorter ones show when a tick falls due inside them.

/** The figures since the last `reset`, in seconds; zeros when no tick ran since. */
export interface LoopDelayFigures {
  min: number;
  max: number;
  mean: number;
  stddev: number;
  p50: number;
  p90: number;
  p99: number;
}

export interface LoopDelaySampler {
  figures(): LoopDelayFigures;
  /** Starts a new window (prom-client's histogram is reset at each scrape, as this is). */
  reset(): void;
  stop(): void;
}

/** Records `delay` (ms) values into a window: streaming min/max/mean/stddev, percentiles over the last `capacity`. */
export class DelayWindow {
  private readonly ring: Float64Array;
  private count = 0;
  private min = Number.POSITIVE_INFINITY;
  private max = 0;
  private sum = 0;
  private sumSq = 0;

  constructor(capacity = 1024) {
    this.ring = new Float64Array(capacity);
  }

  record(ms: number): void {
    const d = ms > 0 ? ms : 0;
    this.ring[this.count % this.ring.length] = d;
    this.count++;
    if (d < this.min) this.min = d;
    if (d > this.max) this.max = d;
    this.sum += d;
    this.sumSq += d * d;
  }

  figures(): LoopDelayFigures {
    const n = this.count;
    if (n === 0) return { min: 0, max: 0, mean: 0, stddev: 0, p50: 0, p90: 0, p99: 0 };
    const kept = this.ring.slice(0, Math.min(n, this.ring.length)).sort();
    // Nearest rank, as HdrHistogram's percentile gives a recorded value.
    const at = (p: number) => kept[Math.min(kept.length - 1, Math.ceil((p / 100) * kept.length) - 1)]! / 1000;
    const mean = this.sum / n;
    return {
      min: this.min / 1000,
      max: this.max / 1000,
      mean: mean / 1000,
      stddev: Math.sqrt(Math.max(0, this.sumSq / n - mean * mean)) / 1000,
      p50: at(50),
      p90: at(90),
      p99: at(99),
    };
  }

  reset(): void {
    this.count = 0;
    this.min = Number.POSITIVE_INFINITY;
    this.max = 0;
    this.sum = 0;
    this.sumSq = 0;
  }
}

/** Starts sampling the loop's timer delay every `intervalMs`; the timer never keeps the process alive. */
export function sampleLoopDelay(
  intervalMs = 100,
  now: () => number = () => performance.now(),
): LoopDelaySampler {
  const window = new DelayWindow();
  let due = now() + intervalMs;
  const timer = setInterval(() => {
    const t = now();
    window.record(t - due);
    due = t + intervalMs;
  }, intervalMs);
  timer.unref();
  return {
    figures: () => window.figures(),
    reset: () => window.reset(),
    stop: () => clearInterval(timer),
  };
}
