// Start-up's way into the metabase: a quick_check first; a damaged file is never used. It is moved
// aside (kept for inspection, with its -wal and -shm), the newest snapshot that verifies is put in
// its place (or, with none, an empty metabase that the manifests, the cloud and the runtime fill
// again), and the new metabase gets a new identity, so that garbage collection leaves every pod the
// runtime still runs alone until one of those sources claims it again.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { MetabaseCorruptError } from './integrity.ts';
import { type Durability, type Metabase, openMetabase, type Recovery, SCHEMA_VERSION } from './open.ts';
import {
  installCopy,
  listSnapshots,
  METABASE_FILE,
  moveAside,
  takeSnapshot,
  verifyFile,
} from './snapshot.ts';
import { openSqlite, type Sqlite } from './sqlite.ts';

export interface CheckedOpenOptions {
  durability?: Durability;
  /** Snapshots kept (the one taken before a migration counts). */
  keep: number;
  now: () => number;
  /** A snapshot before a migration failed (the migration goes on). */
  onSnapshotError?: (err: unknown) => void;
}

/** How far the resourceVersion jumps after a recovery: every watch from before answers 410 and relists. */
const RV_JUMP = 1_000_000;

/** What the damaged file still tells about objects created through the API (best effort, may be nothing). */
function salvageApiObjects(path: string): string[] | undefined {
  let db: Sqlite | undefined;
  const found: string[] = [];
  try {
    db = openSqlite(path, { readonly: true, fileMustExist: true });
  } catch {
    return undefined;
  }
  const queries = [
    "SELECT 'pod ' || namespace || '/' || name AS n FROM pods WHERE source = 'api' ORDER BY 1",
    "SELECT 'device ' || namespace || '/' || name AS n FROM devices WHERE source = 'api' ORDER BY 1",
    "SELECT lower(kind) || ' ' || namespace || '/' || name AS n FROM objects WHERE source = 'api' ORDER BY 1",
  ];
  for (const q of queries) {
    try {
      for (const r of db.prepare(q).all() as { n: string }[]) found.push(r.n);
    } catch {}
  }
  try {
    db.close();
  } catch {}
  return found;
}

/**
 * Opens DATA_DIR/outpost.db after a quick_check, taking a snapshot before any migration; a damaged
 * file is replaced as described above and the result carries `recovery`. Other failures throw as
 * openMetabase does.
 */
export function openCheckedMetabase(dataDir: string, o: CheckedOpenOptions): Metabase {
  const beforeMigrate = (sqlite: Sqlite, _from: number, to: number) => {
    try {
      takeSnapshot(sqlite, dataDir, { keep: o.keep, reason: `before-v${to}`, now: o.now() });
    } catch (e) {
      o.onSnapshotError?.(e);
    }
  };
  const open = () =>
    openMetabase(dataDir, {
      check: true,
      beforeMigrate,
      ...(o.durability ? { durability: o.durability } : {}),
    });
  let damaged: MetabaseCorruptError;
  try {
    return open();
  } catch (e) {
    if (!(e instanceof MetabaseCorruptError)) throw e;
    damaged = e;
  }
  const at = o.now();
  const movedTo = moveAside(dataDir, 'corrupt', at);
  let metabase: Metabase | undefined;
  let restored: Recovery['snapshot'];
  for (const s of listSnapshots(dataDir)) {
    const v = verifyFile(s.path);
    if (v.problems.length > 0 || v.version > SCHEMA_VERSION) continue;
    installCopy(s.path, dataDir);
    try {
      metabase = open();
      restored = { path: s.path, takenAt: s.takenAt };
      break;
    } catch (e) {
      if (!(e instanceof MetabaseCorruptError)) throw e;
      moveAside(dataDir, 'bad-restore', o.now());
    }
  }
  metabase ??= openMetabase(dataDir, o.durability ? { durability: o.durability } : {});
  const apiObjects = salvageApiObjects(movedTo);
  const named = apiObjects?.length
    ? ` (the damaged file still names ${apiObjects.slice(0, 20).join(', ')}${apiObjects.length > 20 ? ', ...' : ''})`
    : '';
  const lost = restored
    ? `changes after the snapshot of ${new Date(restored.takenAt).toISOString()}: objects created or changed ` +
      `through the API (pods, devices and their edits, ConfigMaps, Secrets), audit records, events and cloud ` +
      'uploads pending since then'
    : 'no snapshot verified, rebuilt from the manifests, the cloud and the runtime: objects created or changed ' +
      `through the API (pods, devices and their edits, ConfigMaps, Secrets)${named}, the audit trail, events ` +
      'and pending cloud uploads';
  const recovery: Recovery = {
    at,
    problems: damaged.problems,
    movedTo,
    ...(restored ? { snapshot: restored } : {}),
    lost,
  };
  const sqlite = metabase.sqlite;
  const set = sqlite.prepare(
    'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
  );
  sqlite.transaction(() => {
    set.run('metabase_id', randomUUID());
    const rv = Number(
      (sqlite.prepare("SELECT value FROM meta WHERE key = 'rv'").get() as { value: string } | undefined)
        ?.value ?? 0,
    );
    set.run('rv', String(rv + RV_JUMP));
    set.run('last_recovery', JSON.stringify(recovery));
  })();
  metabase.recovery = recovery;
  return metabase;
}

/** The last recovery this metabase went through, if any (kept in its `meta` table). */
export function lastRecovery(sqlite: Sqlite): Recovery | undefined {
  try {
    const row = sqlite.prepare("SELECT value FROM meta WHERE key = 'last_recovery'").get() as
      | { value: string }
      | undefined;
    return row ? (JSON.parse(row.value) as Recovery) : undefined;
  } catch {
    return undefined;
  }
}

/** The metabase file of a data directory. */
export const metabaseFile = (dataDir: string): string => join(dataDir, METABASE_FILE);
