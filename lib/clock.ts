// Time as a dependency: production code takes a Clock so tests drive backoff and health
// intervals with ManualClock instead of sleeping.

declare const timerBrand: unique symbol;
/** An opaque timer handle; only the clock that made it can clear it. */
export type Timer = { readonly [timerBrand]: true };

/** Wall-clock milliseconds and one-shot timers. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): Timer;
  clearTimeout(t: Timer): void;
}

/** The real clock. Timers are not unref'd: a pending restart must keep the process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms) as unknown as Timer,
  clearTimeout: (t) => clearTimeout(t as unknown as NodeJS.Timeout),
};

interface Pending {
  at: number;
  seq: number;
  fn: () => void;
}

/** A clock that only moves when told to; for tests. */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new Set<Pending>();

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): Timer {
    const t: Pending = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.add(t);
    return t as unknown as Timer;
  }

  clearTimeout(t: Timer): void {
    this.timers.delete(t as unknown as Pending);
  }

  /** Number of timers not yet fired or cleared. */
  get pending(): number {
    return this.timers.size;
  }

  /** Due time of the earliest pending timer, if any. */
  nextAt(): number | undefined {
    return this.next()?.at;
  }

  /** Moves time forward by `ms`, firing due timers in due-time order (ties in creation order),
   * including timers that fired callbacks schedule inside the window. */
  advance(ms: number): void {
    const until = this.current + Math.max(0, ms);
    for (let t = this.next(); t && t.at <= until; t = this.next()) this.fire(t);
    this.current = until;
  }

  /** Like advance(), but lets promise callbacks and I/O callbacks run after each timer, so async
   * work a timer starts can schedule its own timers before time moves on. Does not sleep. */
  async advanceAsync(ms: number): Promise<void> {
    const until = this.current + Math.max(0, ms);
    await settle();
    for (let t = this.next(); t && t.at <= until; t = this.next()) {
      this.fire(t);
      await settle();
    }
    this.current = until;
  }

  private fire(t: Pending): void {
    this.timers.delete(t);
    this.current = Math.max(this.current, t.at);
    t.fn();
  }

  private next(): Pending | undefined {
    let best: Pending | undefined;
    for (const t of this.timers)
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    return best;
  }
}

/** Settles like `p`, or rejects after `ms` on `clock` if `p` has not settled by then. */
export function withTimeout<T>(clock: Clock, p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = clock.setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => {
        clock.clearTimeout(t);
        resolve(v);
      },
      (err: unknown) => {
        clock.clearTimeout(t);
        reject(err);
      },
    );
  });
}

/**
 * Resolves after `ms`, or at once when `signal` aborts or `wake` settles, whichever comes first;
 * never rejects (callers that must stop on abort check the signal). Its timer and abort listener
 * are removed as soon as it resolves, so a sleep raced against other work leaves nothing behind.
 */
export function sleep(ms: number, signal?: AbortSignal, wake?: Promise<unknown>): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    wake?.then(done, done);
  });
}

/** Resolves after already-queued promise callbacks have run (a few macrotask turns, no sleeping). */
export async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
