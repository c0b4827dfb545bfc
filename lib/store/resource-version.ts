import type { Sqlite, Statement } from '#db/sqlite.ts';

/**
 * The global resourceVersion counter (like etcd's revision), persisted in the `meta` table and
 * bumped inside the same transaction as the change it versions.
 */
export class ResourceVersions {
  readonly #get: Statement<[string], { value: string }>;
  readonly #set: Statement<[string, string]>;
  #current: number;

  constructor(sqlite: Sqlite) {
    this.#get = sqlite.prepare('SELECT value FROM meta WHERE key = ?');
    this.#set = sqlite.prepare(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
    );
    this.#current = Number(this.#get.get('rv')?.value ?? 0);
  }

  get current(): number {
    return this.#current;
  }

  /** Allocates the next resourceVersion; call inside the write's transaction. */
  next(): number {
    this.#current += 1;
    this.#set.run('rv', String(this.#current));
    return this.#current;
  }

  /** Allocates the next value of a named counter (e.g. the per-node status sequence). */
  nextOf(key: string): number {
    const value = Number(this.#get.get(key)?.value ?? 0) + 1;
    this.#set.run(key, String(value));
    return value;
  }
}
