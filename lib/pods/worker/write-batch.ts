import type { Sqlite } from '#db/sqlite.ts';

/**
 * Coalesces the metabase writes the pod workers make in one turn of the event loop (status
 * patches, events) into one transaction: with `synchronous=FULL` every commit is an fsync, and a
 * node recovering fifty pods would otherwise pay a few hundred of them. Writes run in the order
 * they were added, each in its own savepoint, so one failing write does not undo the others.
 */
export class WriteBatch {
  readonly #sqlite: Sqlite;
  readonly #onError: (err: unknown) => void;
  #queue: (() => void)[] = [];
  #scheduled = false;

  constructor(sqlite: Sqlite, onError: (err: unknown) => void) {
    this.#sqlite = sqlite;
    this.#onError = onError;
  }

  /** Queues a write; it is committed with the others before the next turn of the event loop. */
  add(write: () => void): void {
    this.#queue.push(write);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Commits what is queued now. */
  flush(): void {
    const queue = this.#queue;
    this.#queue = [];
    this.#scheduled = false;
    if (queue.length === 0) return;
    if (!this.#sqlite.open) return;
    this.#sqlite.transaction(() => {
      for (const write of queue) {
        try {
          this.#sqlite.transaction(write)();
        } catch (err) {
          this.#onError(err);
        }
      }
    })();
  }
}
