// Running out of space: how SQLite and Node say it, and how much is left where the metabase lives.
import { statfsSync } from 'node:fs';

/** SQLITE_FULL ("database or disk is full") or ENOSPC: a write failed for lack of space. */
export function isNoSpace(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'SQLITE_IOERR_WRITE_ENOSPC';
}

/** Bytes an unprivileged writer may still use on the filesystem of `dir` (statfs f_bavail), or -1. */
export function freeBytes(dir: string): number {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return -1;
  }
}
