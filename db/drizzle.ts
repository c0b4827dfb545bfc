// Drizzle's typed query builder over a metabase's own connection, made on first use. Drizzle keeps
// the schema (schema.ts) and writes the migrations (drizzle-kit); Outpost's stores run their own
// prepared statements on the hot paths (lib/store/), so `serve` never builds this, and its bundle
// holds neither Drizzle's query builders nor the schema's table objects (about 0.25 MiB of heap
// and 75 KiB of resident script, docs/performance.md).
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import type { Metabase } from './open.ts';
import * as schema from './schema.ts';
import type { Sqlite } from './sqlite.ts';

export type Db = BetterSQLite3Database<typeof schema>;

const built = new WeakMap<Sqlite, Db>();

/** The query builder over `mb`'s connection (one per connection). */
export function drizzleOf(mb: Pick<Metabase, 'sqlite'>): Db {
  let db = built.get(mb.sqlite);
  if (!db) {
    db = drizzle(mb.sqlite, { schema });
    built.set(mb.sqlite, db);
  }
  return db;
}
