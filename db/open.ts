import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import { migrations } from './migrations.gen.ts';
import * as schema from './schema.ts';

/** The schema version this build writes: one per committed migration. */
export const SCHEMA_VERSION = migrations.length;

/**
 * `full`: every commit is fsynced before it is acknowledged (survives power loss; the default).
 * `normal`: WAL commits are fsynced at checkpoints only (survives a process crash, may lose the
 * last commits on power loss).
 */
export type Durability = 'full' | 'normal';

export type Db = BetterSQLite3Database<typeof schema>;

export interface Metabase {
  sqlite: Database.Database;
  db: Db;
  path: string;
  close(): void;
}

/** The metabase cannot be used: unreadable, or written by a newer Outpost. Fatal at start-up. */
export class MetabaseError extends Error {
  override name = 'MetabaseError';
}

/** Opens (creating if needed) the metabase at `DIR/outpost.db` or `:memory:`, migrating it forward. */
export function openMetabase(dir: string, opts: { durability?: Durability } = {}): Metabase {
  let path = ':memory:';
  if (dir !== ':memory:') {
    try {
      mkdirSync(dir, { recursive: true });
    } catch (e) {
      throw new MetabaseError(`cannot create data directory ${dir}: ${(e as Error).message}`);
    }
    path = join(dir, 'outpost.db');
  }
  let sqlite: Database.Database;
  try {
    sqlite = new Database(path);
    sqlite.pragma('journal_mode = WAL');
  } catch (e) {
    throw new MetabaseError(`cannot open metabase ${path}: ${(e as Error).message}`);
  }
  sqlite.pragma(`synchronous = ${opts.durability === 'normal' ? 'NORMAL' : 'FULL'}`);
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  migrate(sqlite, path);
  const db = drizzle(sqlite, { schema });
  return { sqlite, db, path, close: () => sqlite.close() };
}

/** Applies the embedded migrations above `PRAGMA user_version`, each in its own transaction. */
function migrate(sqlite: Database.Database, path: string): void {
  const current = sqlite.pragma('user_version', { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    sqlite.close();
    throw new MetabaseError(
      `metabase ${path} has schema version ${current}, written by a newer Outpost; this build knows ` +
        `version ${SCHEMA_VERSION} and will not alter it. Upgrade Outpost or point --data-dir elsewhere.`,
    );
  }
  for (let v = current; v < SCHEMA_VERSION; v++) {
    const m = migrations[v]!;
    sqlite.transaction(() => {
      for (const statement of m.statements) sqlite.exec(statement);
      sqlite.pragma(`user_version = ${v + 1}`);
    })();
  }
}
