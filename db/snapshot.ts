// Consistent online snapshots of the metabase (`VACUUM INTO`: one read transaction, so writers go
// on and the copy is a single committed state), each verified before it counts, the newest N kept
// in DATA_DIR/snapshots; and the file moves a restore makes.
import {
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { compareGoStrings } from '#lib/kube/order.ts';
import { checkIntegrity } from './integrity.ts';
import { openSqlite, type Sqlite } from './sqlite.ts';

export const METABASE_FILE = 'outpost.db';
export const SNAPSHOT_DIR = 'snapshots';
/** What a WAL database is made of: the file, its write-ahead log and its shared-memory index. */
const PARTS = ['', '-wal', '-shm'] as const;

export interface Snapshot {
  path: string;
  /** When it was taken (Unix ms, from its name). */
  takenAt: number;
  bytes: number;
  /** Why it was taken: `scheduled`, `manual`, `before-v3` (a migration to schema version 3). */
  reason: string;
}

/** A snapshot could not be written or did not verify; nothing of it is left behind. */
export class SnapshotError extends Error {
  override name = 'SnapshotError';
}

/** `20261126T214500123Z`: sortable, safe in a file name. */
export const fileStamp = (ms: number): string => new Date(ms).toISOString().replace(/[-:.]/g, '');

const NAME = /^outpost-(\d{8}T\d{9}Z)-([a-z0-9-]+)\.db$/;

function parseStamp(s: string): number {
  const m = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)(\d{3})Z$/.exec(s);
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, +m[7]!) : 0;
}

/** The snapshots in DATA_DIR/snapshots, newest first. */
export function listSnapshots(dataDir: string): Snapshot[] {
  const dir = join(dataDir, SNAPSHOT_DIR);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: Snapshot[] = [];
  for (const name of names) {
    const m = NAME.exec(name);
    if (!m) continue;
    const path = join(dir, name);
    try {
      out.push({ path, takenAt: parseStamp(m[1]!), bytes: statSync(path).size, reason: m[2]! });
    } catch {}
  }
  return out.sort((a, b) => b.takenAt - a.takenAt || compareGoStrings(b.path, a.path));
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Opens a metabase file read-only and runs quick_check (or the full integrity_check); returns its
 * problems (none: sound) and its schema version. A file SQLite cannot read at all is a problem too.
 */
export function verifyFile(
  path: string,
  mode: 'quick' | 'full' = 'quick',
): { problems: string[]; version: number } {
  let db: Sqlite | undefined;
  try {
    db = openSqlite(path, { readonly: true, fileMustExist: true });
    const problems = checkIntegrity(db, mode);
    const version = problems.length ? 0 : (db.pragma('user_version', { simple: true }) as number);
    return { problems, version };
  } catch (e) {
    return { problems: [(e as Error).message], version: 0 };
  } finally {
    db?.close();
  }
}

/**
 * Writes a snapshot of the open metabase to DATA_DIR/snapshots (a temporary name, fsynced,
 * verified, then renamed), and removes all but the newest `keep`. Throws SnapshotError (or the
 * SQLite error, e.g. SQLITE_FULL) and leaves no partial file.
 */
export function takeSnapshot(
  sqlite: Sqlite,
  dataDir: string,
  opts: { keep: number; reason: string; now: number },
): Snapshot {
  const dir = join(dataDir, SNAPSHOT_DIR);
  mkdirSync(dir, { recursive: true });
  const name = `outpost-${fileStamp(opts.now)}-${opts.reason}.db`;
  const tmp = join(dir, `.${name}.tmp`);
  const path = join(dir, name);
  try {
    if (existsSync(tmp)) unlinkSync(tmp);
    sqlite.prepare('VACUUM INTO ?').run(tmp);
    fsyncPath(tmp);
    const { problems } = verifyFile(tmp);
    if (problems.length > 0)
      throw new SnapshotError(`snapshot ${path} did not verify: ${problems.join('; ')}`);
    renameSync(tmp, path);
    fsyncPath(dir);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {}
    throw e;
  }
  pruneSnapshots(dataDir, opts.keep);
  return { path, takenAt: opts.now, bytes: statSync(path).size, reason: opts.reason };
}

/** Removes all but the newest `keep` snapshots (and temporary files a crash left). */
export function pruneSnapshots(dataDir: string, keep: number): void {
  const dir = join(dataDir, SNAPSHOT_DIR);
  for (const s of listSnapshots(dataDir).slice(Math.max(1, keep))) {
    try {
      unlinkSync(s.path);
    } catch {}
  }
  try {
    for (const f of readdirSync(dir)) if (f.endsWith('.tmp')) unlinkSync(join(dir, f));
  } catch {}
}

/**
 * Moves DATA_DIR/outpost.db with its -wal and -shm aside, as `outpost.db.LABEL-STAMP` (+ `-wal`,
 * `-shm`, so sqlite3 opens the kept copy as it was); returns the new path of the main file.
 */
export function moveAside(dataDir: string, label: string, now: number): string {
  const from = join(dataDir, METABASE_FILE);
  const to = `${from}.${label}-${fileStamp(now)}`;
  for (const part of PARTS) if (existsSync(from + part)) renameSync(from + part, to + part);
  fsyncPath(dataDir);
  return to;
}

/**
 * Puts a copy of `file` in place as DATA_DIR/outpost.db (copied under a temporary name, fsynced,
 * renamed). The caller has moved the old metabase aside (no -wal or -shm of it may stay).
 */
export function installCopy(file: string, dataDir: string): void {
  const target = join(dataDir, METABASE_FILE);
  const tmp = join(dataDir, `.${basename(target)}.restore.tmp`);
  try {
    copyFileSync(file, tmp);
    fsyncPath(tmp);
    for (const part of PARTS.slice(1)) if (existsSync(target + part)) unlinkSync(target + part);
    renameSync(tmp, target);
    fsyncPath(dirname(target));
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {}
    throw e;
  }
}
