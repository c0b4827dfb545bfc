// `outpost snapshot`, `outpost restore FILE` and `outpost doctor`: the metabase's file-level care,
// run on the data directory itself (no API needed). A snapshot and the doctor may run beside a
// serving agent (SQLite's WAL lets a reader in); a restore refuses while an agent holds the lock.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { freeBytes } from '#db/disk.ts';
import { checkIntegrity } from '#db/integrity.ts';
import { LOCK_FILE, lockDataDir } from '#db/lock.ts';
import { SCHEMA_VERSION } from '#db/open.ts';
import { lastRecovery } from '#db/recover.ts';
import {
  installCopy,
  listSnapshots,
  METABASE_FILE,
  moveAside,
  takeSnapshot,
  verifyFile,
} from '#db/snapshot.ts';
import { openSqlite, type Sqlite } from '#db/sqlite.ts';

type Out = (s: string) => void;
const stdout: Out = (s) => process.stdout.write(s);
const stderr: Out = (s) => process.stderr.write(s);

const size = (bytes: number): string =>
  bytes >= 1 << 30
    ? `${(bytes / (1 << 30)).toFixed(1)} GiB`
    : bytes >= 1 << 20
      ? `${(bytes / (1 << 20)).toFixed(1)} MiB`
      : `${Math.ceil(bytes / 1024)} KiB`;

/** The data directory a command works on: --data-dir, OUTPOST_DATA_DIR, or ./data (as `serve`). */
export const dataDirOf = (flag: string | undefined): string =>
  resolve(flag ?? process.env.OUTPOST_DATA_DIR ?? './data');

/** Takes a verified snapshot of DATA_DIR/outpost.db now; prints its path. */
export function snapshotCommand(o: { dataDir: string; keep: number }, out = stdout, err = stderr): number {
  const path = join(o.dataDir, METABASE_FILE);
  if (!existsSync(path)) {
    err(`error: no metabase at ${path}\n`);
    return 1;
  }
  const db = openSqlite(path, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const s = takeSnapshot(db, o.dataDir, { keep: o.keep, reason: 'manual', now: Date.now() });
    out(`${s.path}\t${size(s.bytes)}\tverified\n`);
    return 0;
  } catch (e) {
    err(`error: snapshot failed: ${(e as Error).message}\n`);
    return 1;
  } finally {
    db.close();
  }
}

/**
 * Replaces DATA_DIR/outpost.db by a copy of `file` after verifying it; the replaced metabase is
 * kept as outpost.db.replaced-STAMP. Refuses (exit 3) while an agent holds the data directory.
 */
export function restoreCommand(o: { dataDir: string; file: string }, out = stdout, err = stderr): number {
  const file = resolve(o.file);
  const v = verifyFile(file);
  if (v.problems.length > 0) {
    err(`error: ${file} is not a sound metabase: ${v.problems.join('; ')}\n`);
    return 1;
  }
  if (v.version > SCHEMA_VERSION) {
    err(
      `error: ${file} has schema version ${v.version}, written by a newer Outpost (this one knows ${SCHEMA_VERSION})\n`,
    );
    return 1;
  }
  const lock = lockDataDir(o.dataDir); // throws DataDirLockedError (exit 3) while an agent runs
  try {
    const kept = existsSync(join(o.dataDir, METABASE_FILE))
      ? moveAside(o.dataDir, 'replaced', Date.now())
      : undefined;
    installCopy(file, o.dataDir);
    out(
      `restored ${file} as ${join(o.dataDir, METABASE_FILE)}${kept ? `; the replaced metabase is kept as ${kept}` : ''}\n`,
    );
    return 0;
  } finally {
    lock.release();
  }
}

/** Full integrity_check of the metabase, its snapshots verified, space and lock: 0 when sound. */
export function doctorCommand(o: { dataDir: string }, out = stdout): number {
  const path = join(o.dataDir, METABASE_FILE);
  let problems = 0;
  if (!existsSync(path)) {
    out(`metabase ${path}: none yet (created by the first outpost serve)\n`);
  } else {
    let db: Sqlite | undefined;
    try {
      db = openSqlite(path, { readonly: true, fileMustExist: true });
      db.pragma('busy_timeout = 5000');
      const found = checkIntegrity(db, 'full');
      const version = found.length ? '?' : String(db.pragma('user_version', { simple: true }));
      out(
        `metabase ${path}: ${size(statSync(path).size)}, schema version ${version}, integrity_check ` +
          `${found.length ? `FAILED:\n${found.map((p) => `  ${p}\n`).join('')}` : 'ok\n'}`,
      );
      problems += found.length;
      const r = found.length ? undefined : lastRecovery(db);
      if (r)
        out(
          `last recovery ${new Date(r.at).toISOString()}: moved ${r.movedTo}; ` +
            `${r.snapshot ? `restored ${r.snapshot.path}` : 'rebuilt without a snapshot'}; not recovered: ${r.lost}\n`,
        );
    } catch (e) {
      out(`metabase ${path}: cannot be read: ${(e as Error).message}\n`);
      problems += 1;
    } finally {
      db?.close();
    }
  }
  const snaps = listSnapshots(o.dataDir);
  out(
    `snapshots in ${join(o.dataDir, 'snapshots')}: ${snaps.length}${snaps.length ? ', newest first' : ''}\n`,
  );
  for (const s of snaps) {
    const v = verifyFile(s.path);
    out(
      `  ${s.path}\t${new Date(s.takenAt).toISOString()}\t${size(s.bytes)}\t` +
        `${v.problems.length ? `BAD: ${v.problems[0]}` : `ok (schema version ${v.version})`}\n`,
    );
  }
  const kept = safeList(o.dataDir).filter((f) =>
    /^outpost\.db\.(corrupt|replaced|bad-restore)-[^-]+$/.test(f),
  );
  for (const f of kept) out(`kept for inspection: ${join(o.dataDir, f)}\n`);
  const free = freeBytes(o.dataDir);
  out(`data directory ${o.dataDir}: ${free >= 0 ? `${size(free)} free` : 'free space unknown'}\n`);
  const holder = lockHolder(o.dataDir);
  out(holder ? `in use by the Outpost with PID ${holder}\n` : 'not in use by a running Outpost\n');
  return problems > 0 ? 1 : 0;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

function lockHolder(dir: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(join(dir, LOCK_FILE), 'utf8'), 10);
    if (!(pid > 0)) return undefined;
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}
