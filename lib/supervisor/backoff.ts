// Restart backoff as pure math: BeeHive's curve (1 s × 2 up to 30 s, optional retry limit) plus the
// reset BeeHive lacks: a module that ran healthy for `resetAfterMs` starts the curve again.
// No timers here; the caller owns time and passes `now`.

/** The exponential curve. */
export interface BackoffCurve {
  initialMs?: number;
  factor?: number;
  maxMs?: number;
}

/** The curve plus the reset period and the retry limit. */
export interface BackoffOptions extends BackoffCurve {
  /** How long a run must stay healthy before the next failure counts as the first again. */
  resetAfterMs?: number;
  /** Restarts allowed in one streak of failures; the next failure gives up. Default unlimited. */
  maxRetries?: number;
}

export const BACKOFF_DEFAULTS = {
  initialMs: 1000,
  factor: 2,
  maxMs: 30_000,
  resetAfterMs: 60_000,
  maxRetries: Number.POSITIVE_INFINITY,
} as const satisfies Required<BackoffOptions>;

/** Delay before restart number `attempt` (0-based): `initialMs × factor^attempt`, capped at `maxMs`. */
export function backoffDelay(attempt: number, opts: BackoffCurve = {}): number {
  const initialMs = opts.initialMs ?? BACKOFF_DEFAULTS.initialMs;
  const factor = opts.factor ?? BACKOFF_DEFAULTS.factor;
  const maxMs = opts.maxMs ?? BACKOFF_DEFAULTS.maxMs;
  const n = Number.isFinite(attempt) ? Math.max(0, Math.floor(attempt)) : 0;
  // factor ** n overflows to Infinity for large n; Math.min still caps it.
  return Math.max(0, Math.min(maxMs, initialMs * factor ** n));
}

/** Backoff bookkeeping for one module or child process. */
export interface BackoffState {
  /** Failures in the current streak (0 = the next failure is the first). */
  failures: number;
  /** When the current run became healthy, or undefined while it is not (yet) healthy. */
  healthySince: number | undefined;
}

export type BackoffEvent =
  /** The run reported itself healthy (ready, or a passing health check after failing ones). */
  | { type: 'healthy' }
  /** The run is still up but a health check failed: the healthy period starts over. */
  | { type: 'unhealthy' }
  /** The run ended (crash, failed health, or a return the policy restarts). */
  | { type: 'failure' };

export type BackoffDecision =
  | { action: 'none' }
  | { action: 'retry'; attempt: number; delayMs: number; retryAt: number }
  | { action: 'giveUp'; failures: number };

export const initialBackoffState = (): BackoffState => ({ failures: 0, healthySince: undefined });

/** Advances the backoff state by one event at `now` and says what to do next. */
export function nextBackoff(
  state: BackoffState,
  event: BackoffEvent,
  now: number,
  opts: BackoffOptions = {},
): { state: BackoffState; decision: BackoffDecision } {
  switch (event.type) {
    case 'healthy':
      return { state: { ...state, healthySince: state.healthySince ?? now }, decision: { action: 'none' } };
    case 'unhealthy':
      return { state: { ...state, healthySince: undefined }, decision: { action: 'none' } };
    case 'failure': {
      const resetAfterMs = opts.resetAfterMs ?? BACKOFF_DEFAULTS.resetAfterMs;
      const maxRetries = opts.maxRetries ?? BACKOFF_DEFAULTS.maxRetries;
      const healthyFor = state.healthySince === undefined ? 0 : now - state.healthySince;
      const previous = healthyFor >= resetAfterMs ? 0 : state.failures;
      const failures = previous + 1;
      const next: BackoffState = { failures, healthySince: undefined };
      if (failures > maxRetries) return { state: next, decision: { action: 'giveUp', failures } };
      const delayMs = backoffDelay(previous, opts);
      return {
        state: next,
        decision: { action: 'retry', attempt: failures, delayMs, retryAt: now + delayMs },
      };
    }
  }
}
