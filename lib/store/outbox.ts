import type { Metabase } from '#db/open.ts';
import type { Sqlite, Statement } from '#db/sqlite.ts';

export type OutboxKind = 'status' | 'event' | 'delete' | 'device-status';

export interface OutboxEntry {
  id: number;
  kind: OutboxKind;
  key: string;
  op: 'create' | 'update' | null;
  payload: unknown;
  createdAt: number;
}

interface Row {
  id: number;
  kind: OutboxKind;
  key: string;
  op: 'create' | 'update' | null;
  payload: string;
  created_at: number;
}

/**
 * The cloud link's durable, ordered outbox (table `outbox`). Writers call `push` inside the
 * transaction of the change it reports, so a change is either committed with its entry or not
 * at all; the sender reads entries in order and acknowledges them once the cloud has them.
 * A pushed entry replaces a pending one of the same kind and key: the cloud needs a pod's latest
 * status and an event's latest count, not every step (an event first seen in the replaced entry
 * stays a `create`). Disabled (no cloud link), `push` writes nothing.
 */
export class OutboxStore {
  readonly #sqlite: Sqlite;
  readonly #now: () => number;
  readonly #pending: Statement<[string, string], { id: number; op: string | null; created_at: number }>;
  readonly #delete: Statement<[number]>;
  readonly #insert: Statement<[string, string, string | null, string, number]>;
  readonly #listeners = new Set<() => void>();
  /** Whether changes are recorded for a cloud (set by the agent when a cloud link is configured). */
  enabled = false;

  constructor(mb: Metabase, now: () => number = Date.now) {
    this.#sqlite = mb.sqlite;
    this.#now = now;
    this.#pending = mb.sqlite.prepare(
      'SELECT id, op, created_at FROM outbox WHERE kind = ? AND key = ? ORDER BY id LIMIT 1',
    );
    this.#delete = mb.sqlite.prepare('DELETE FROM outbox WHERE id = ?');
    this.#insert = mb.sqlite.prepare(
      'INSERT INTO outbox (kind, key, op, payload, created_at) VALUES (?, ?, ?, ?, ?)',
    );
  }

  /** Appends an entry (replacing a pending one of the same kind and key); call inside the change's transaction. */
  push(kind: OutboxKind, key: string, payload: unknown, op: 'create' | 'update' | null = null): void {
    if (!this.enabled) return;
    let createdAt = this.#now();
    const prev = this.#pending.get(kind, key);
    if (prev) {
      this.#delete.run(prev.id);
      createdAt = Math.min(createdAt, prev.created_at);
      if (prev.op === 'create') op = 'create';
    }
    this.#insert.run(kind, key, op, JSON.stringify(payload), createdAt);
    for (const l of this.#listeners) l();
  }

  /** Whether an entry of that kind and key waits. */
  has(kind: OutboxKind, key: string): boolean {
    return this.#pending.get(kind, key) !== undefined;
  }

  /** Drops the pending entries of a kind and key (the object is gone in the cloud already). */
  discard(kind: OutboxKind, key: string): void {
    this.#sqlite.prepare('DELETE FROM outbox WHERE kind = ? AND key = ?').run(kind, key);
  }

  /** The oldest `limit` entries, in order. */
  peek(limit: number): OutboxEntry[] {
    return this.#sqlite
      .prepare<[number], Row>('SELECT * FROM outbox ORDER BY id LIMIT ?')
      .all(limit)
      .map((r) => ({
        id: r.id,
        kind: r.kind,
        key: r.key,
        op: r.op,
        payload: JSON.parse(r.payload) as unknown,
        createdAt: r.created_at,
      }));
  }

  /**
   * Removes entries the cloud acknowledged, in one transaction. An entry replaced since it was
   * read is gone already: its successor stays and is sent next.
   */
  ack(ids: readonly number[], after?: () => void): void {
    if (ids.length === 0) return;
    this.#sqlite.transaction(() => {
      for (const id of ids) this.#delete.run(id);
      after?.();
    })();
  }

  /** Entries waiting. */
  depth(): number {
    return (this.#sqlite.prepare('SELECT count(*) AS n FROM outbox').get() as { n: number }).n;
  }

  /** Age in seconds of the oldest change waiting (0 when empty). */
  oldestAgeSeconds(): number {
    const row = this.#sqlite.prepare('SELECT min(created_at) AS t FROM outbox').get() as { t: number | null };
    return row.t === null ? 0 : Math.max(0, (this.#now() - row.t) / 1000);
  }

  /** Calls `fn` after every push (the sender wakes up); returns the unsubscribe function. */
  onPush(fn: () => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }
}
