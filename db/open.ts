import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { isNoSpace } from './disk.ts';
import { checkIntegrity, isCorruption, MetabaseCorruptError } from './integrity.ts';
import { migrations } from './migrations.gen.ts';
import { openSqlite, type Sqlite } from './sqlite.ts';

/** The schema version this build writes: one per committed migration. */
export const SCHEMA_VERSION = migrations.length;

/**
 * `full`: every commit is fsynced before it is acknowledged (survives power loss; the default).
 * `normal`: WAL commits are fsynced at checkpoints only (survives a process crash, may lose the
 * last commits on power loss).
 */
export type Durability = 'full' | 'normal';

/** An open metabase; Drizzle's query builder over it is `drizzleOf(mb)` (db/drizzle.ts). */
export interface Metabase {
  sqlite: Sqlite;
  path: string;
  /** Set when this start found the file damaged and replaced it (see db/recover.ts). */
  recovery?: Recovery;
  close(): void;
}

/** What a start did about a damaged metabase file. */
export interface Recovery {
  /** When (Unix ms). */
  at: number;
  /** What SQLite found wrong with the file. */
  problems: string[];
  /** Where the damaged file (with its -wal and -shm) was moved. */
  movedTo: string;
  /** The snapshot restored, or none: rebuilt from the manifests, the cloud and the runtime. */
  snapshot?: { path: string; takenAt: number };
  /** What could not be recovered, in words. */
  lost: string;
}

export interface OpenOptions {
  durability?: Durability;
  /** Run `PRAGMA quick_check` before anything uses the file; damage throws MetabaseCorruptError. */
  check?: boolean;
  /** Called before the migrations from schema version `from` run on an existing metabase. */
  beforeMigrate?: (sqlite: Sqlite, from: number, to: number) => void;
}

/** The metabase cannot be used: unreadable, or written by a newer Outpost. Fatal at start-up. */
export class MetabaseError extends Error {
  override name = 'MetabaseError';
}

/** Opens (creating if needed) the metabase at `DIR/outpost.db` or `:memory:`, migrating it forward. */
export function openMetabase(dir: string, opts: OpenOptions = {}): Metabase {
  let path = ':memory:';
  if (dir !== ':memory:') {
    try {
      mkdirSync(dir, { recursive: true });
    } catch (e) {
      throw new MetabaseError(`cannot create data directory ${dir}: ${(e as Error).message}`);
    }
    path = join(dir, 'outpost.db');
  }
  let sqlite: Sqlite | undefined;
  try {
    sqlite = openSqlite(path);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma(`synchronous = ${opts.durability === 'normal' ? 'NORMAL' : 'FULL'}`);
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    if (opts.check) {
      const problems = checkIntegrity(sqlite, 'quick');
      if (problems.length > 0) throw new MetabaseCorruptError(path, problems);
    }
    migrate(sqlite, path, opts.beforeMigrate);
  } catch (e) {
    if (sqlite?.open) sqlite.close();
    // Out of space is not an unusable data directory: a restart may well succeed (exit 1, retried).
    if (e instanceof MetabaseError || e instanceof MetabaseCorruptError || isNoSpace(e)) throw e;
    if (isCorruption(e)) throw new MetabaseCorruptError(path, [(e as Error).message]);
    throw new MetabaseError(`cannot open metabase ${path}: ${(e as Error).message}`);
  }
  return { sqlite, path, close: () => sqlite.close() };
}

/** Applies the embedded migrations above `PRAGMA user_version`, each in its own transaction. */
function migrate(sqlite: Sqlite, path: string, beforeMigrate: OpenOptions['beforeMigrate']): void {
  const current = sqlite.pragma('user_version', { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    throw new MetabaseError(
      `metabase ${path} has schema version ${current}, written by a newer Outpost; this build knows ` +
        `version ${SCHEMA_VERSION} and will not alter it. Upgrade Outpost or point --data-dir elsewhere.`,
    );
  }
  if (current > 0 && current < SCHEMA_VERSION) beforeMigrate?.(sqlite, current, SCHEMA_VERSION);
  for (let v = current; v < SCHEMA_VERSION; v++) {
    const m = migrations[v]!;
    sqlite.transaction(() => {
      for (const statement of m.statements) sqlite.exec(statement);
      sqlite.pragma(`user_version = ${v + 1}`);
    })();
  }
}
