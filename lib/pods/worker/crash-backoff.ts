import { backoffDelay } from '#lib/supervisor/backoff.ts';

/** kubelet's container restart curve: 10 s doubling to 5 min; a run of 10 min resets it. */
export const CRASH_BACKOFF = { initialMs: 10_000, factor: 2, maxMs: 300_000, resetAfterMs: 600_000 } as const;

interface Entry {
  restarts: number;
  notBefore: number;
}

/**
 * Per-container restart backoff (kubelet's CrashLoopBackOff). The first restart after a crash is
 * immediate, each later one waits 10 s, 20 s, 40 s ... 5 min after the container finished.
 */
export class CrashBackoff {
  readonly #entries = new Map<string, Entry>();

  /**
   * Whether a container that finished at `finishedAt` (after running `ranMs`) may restart now; if
   * not, when it may. Calling it when allowed books the restart.
   */
  check(
    key: string,
    now: number,
    finishedAt: number,
    ranMs: number,
  ): { allowed: true } | { allowed: false; at: number; delayMs: number } {
    let entry = this.#entries.get(key);
    if (entry && ranMs >= CRASH_BACKOFF.resetAfterMs) entry = undefined;
    if (!entry) {
      this.#entries.set(key, { restarts: 1, notBefore: finishedAt });
      return { allowed: true };
    }
    const delayMs = backoffDelay(entry.restarts - 1, CRASH_BACKOFF);
    const at = Math.max(finishedAt + delayMs, entry.notBefore);
    if (now < at) return { allowed: false, at, delayMs };
    entry.restarts += 1;
    entry.notBefore = now;
    return { allowed: true };
  }

  /** The delay a waiting container is backing off for, for its status message. */
  current(key: string): number | undefined {
    const entry = this.#entries.get(key);
    return entry ? backoffDelay(entry.restarts - 1, CRASH_BACKOFF) : undefined;
  }

  forget(prefix: string): void {
    for (const key of this.#entries.keys()) if (key.startsWith(prefix)) this.#entries.delete(key);
  }
}
