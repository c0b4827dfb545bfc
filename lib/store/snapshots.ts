// Scheduled snapshots of the metabase (--snapshot-interval, --snapshot-keep): the first one soon
// after start when the newest is older than the interval, then one per interval. A failure (the
// disk full, most likely) is logged and counted; the next interval tries again.
import { listSnapshots, type Snapshot, takeSnapshot } from '#db/snapshot.ts';
import type { Clock, Timer } from '#lib/clock.ts';
import type { Logger } from '#lib/log.ts';
import type { Store } from './index.ts';

export interface SnapshotScheduleOptions {
  store: Store;
  dataDir: string;
  intervalMs: number;
  keep: number;
  clock: Clock;
  log: Logger;
  /** Each attempt's outcome (metrics). */
  onResult?: (result: 'ok' | 'failed', at: number) => void;
  /** The first snapshot waits at least this long after start, so manifests are loaded (default 30 s). */
  settleMs?: number;
}

/** Takes a verified snapshot every interval until stopped. */
export class SnapshotSchedule {
  readonly #o: SnapshotScheduleOptions;
  #timer: Timer | undefined;
  #stopped = false;

  constructor(o: SnapshotScheduleOptions) {
    this.#o = o;
  }

  start(): void {
    const { intervalMs, clock } = this.#o;
    const newest = listSnapshots(this.#o.dataDir)[0];
    const due = newest ? newest.takenAt + intervalMs - clock.now() : 0;
    const settle = Math.min(this.#o.settleMs ?? 30_000, intervalMs);
    this.#schedule(Math.min(intervalMs, Math.max(settle, due)));
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = this.#o.clock.setTimeout(() => {
      this.take();
      this.#schedule(this.#o.intervalMs);
    }, ms);
  }

  /** One snapshot now; undefined when it failed (logged) or the disk is known to be full. */
  take(): Snapshot | undefined {
    const { store, log, clock } = this.#o;
    const at = clock.now();
    if (store.disk.full) {
      this.#o.onResult?.('failed', at);
      log.warn(
        { dataDir: this.#o.dataDir },
        'metabase snapshot skipped: no space left in the data directory',
      );
      return undefined;
    }
    try {
      const s = takeSnapshot(store.metabase.sqlite, this.#o.dataDir, {
        keep: this.#o.keep,
        reason: 'scheduled',
        now: at,
      });
      this.#o.onResult?.('ok', at);
      log.info({ path: s.path, bytes: s.bytes }, 'metabase snapshot taken and verified');
      return s;
    } catch (err) {
      store.disk.noteError(err);
      this.#o.onResult?.('failed', at);
      log.warn({ err }, 'metabase snapshot failed; the next interval tries again');
      return undefined;
    }
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) this.#o.clock.clearTimeout(this.#timer);
  }
}
