// A restart asked for through the API stops containers; the pod worker then sees ordinary exits.
// This registry tells it which exits were requested, so it starts those containers again at once:
// no CrashLoopBackOff delay (a requested stop is not a crash, so none is booked either) and
// whatever the restart policy says, since a user who asks for a restart wants the container back.

/** Marks older than this are dropped: their container was removed before the worker saw it exit. */
const KEEP_MS = 10 * 60_000;

/** Container IDs stopped on a user's request, until the pod worker has started them again. */
export class RestartRequests {
  readonly #marked = new Map<string, number>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Marks containers about to be stopped; call before stopping, so no relist sees the exit first. */
  mark(ids: Iterable<string>): void {
    const now = this.#now();
    for (const [id, at] of this.#marked) if (now - at > KEEP_MS) this.#marked.delete(id);
    for (const id of ids) this.#marked.set(id, now);
  }

  /** Withdraws a mark (the stop failed, the container keeps running). */
  unmark(id: string): void {
    this.#marked.delete(id);
  }

  /** Whether the container's exit was requested; the answer is given once. */
  take(id: string): boolean {
    return this.#marked.delete(id);
  }

  get size(): number {
    return this.#marked.size;
  }
}
