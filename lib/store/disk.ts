// Whether the metabase can write: a write that failed for lack of space puts the node under disk
// pressure (503 for writes, DiskPressure=True on the Node, /readyz?verbose); reads go on. A probe
// write once space is back ends it by itself. Every write is a transaction, so a failed one leaves
// nothing half-written.
import { dirname } from 'node:path';
import { freeBytes, isNoSpace } from '#db/disk.ts';
import type { Sqlite } from '#db/sqlite.ts';
import { aroundTransactions } from '#db/transactions.ts';
import { type StatusError, unavailable } from '#lib/kube/status.ts';

/** Space needed back, beyond what the probe write itself takes, before writes are tried again. */
export const RECOVERY_FREE_BYTES = 1 << 20;

export interface DiskFull {
  /** When the first write failed (Unix ms). */
  since: number;
  /** Bytes free in the data directory's filesystem when last looked at. */
  free: number;
  /** The failing write's error. */
  error: string;
}

/** The metabase's disk state, shared by the stores, the API, the Node and the health endpoints. */
export class DiskPressure {
  readonly dataDir: string;
  readonly #now: () => number;
  readonly #sqlite: Sqlite;
  #full: DiskFull | undefined;
  readonly #listeners = new Set<(full: DiskFull | undefined) => void>();

  constructor(sqlite: Sqlite, path: string, now: () => number) {
    this.#sqlite = sqlite;
    this.dataDir = path === ':memory:' ? '.' : dirname(path);
    this.#now = now;
  }

  /** Set while metabase writes fail for lack of space. */
  get full(): DiskFull | undefined {
    return this.#full;
  }

  /** Notes a failed write; true (and under pressure from now on) when it failed for lack of space. */
  noteError(err: unknown): boolean {
    if (!isNoSpace(err)) return false;
    const free = freeBytes(this.dataDir);
    if (this.#full) {
      this.#full.free = free;
      return true;
    }
    this.#full = { since: this.#now(), free, error: (err as Error).message };
    for (const l of this.#listeners) l(this.#full);
    return true;
  }

  /** The 503 a write answers while (or because) the disk is full. */
  unavailable(): StatusError {
    const free = freeBytes(this.dataDir);
    if (this.#full) this.#full.free = free;
    return unavailable(
      `the metabase cannot write: no space left in the data directory ${this.dataDir} ` +
        `(${Math.max(0, free)} bytes free); reads still work, writes resume once space is freed`,
    );
  }

  /**
   * Under pressure: tries a small write when enough space is free again; ends the pressure when it
   * commits. Returns whether the disk is (still) full.
   */
  probe(): boolean {
    if (!this.#full) return false;
    const free = freeBytes(this.dataDir);
    this.#full.free = free;
    if (free >= 0 && free < RECOVERY_FREE_BYTES) return true;
    try {
      this.#sqlite
        .prepare(
          "INSERT INTO meta (key, value) VALUES ('disk_probe', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        )
        .run(String(this.#now()));
    } catch (e) {
      if (isNoSpace(e)) return true;
      throw e;
    }
    this.#full = undefined;
    for (const l of this.#listeners) l(undefined);
    return false;
  }

  /** Called with the new state whenever pressure starts or ends; returns an unsubscribe. */
  onChange(fn: (full: DiskFull | undefined) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /**
   * Wraps `sqlite.transaction` so that every outermost write transaction that fails for lack of
   * space is noted (the rollback is SQLite's and better-sqlite3's).
   */
  watch(): void {
    aroundTransactions(this.#sqlite, (run) => {
      try {
        return run();
      } catch (e) {
        this.noteError(e);
        throw e;
      }
    });
  }
}
