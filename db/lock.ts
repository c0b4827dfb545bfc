// One agent per data directory: DATA_DIR/outpost.lock holds the PID (and, on Linux, the process
// start time, so a recycled PID is not mistaken for the owner). A second agent refuses before it
// touches the metabase; a lock left by a dead process is taken over.
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { MetabaseError } from './open.ts';

export const LOCK_FILE = 'outpost.lock';

/** The data directory is locked by another live agent (exit code 3, like any unusable data directory). */
export class DataDirLockedError extends Error {
  // exitCodeOf maps MetabaseError to 3 by name.
  override name = 'MetabaseError';
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(
      `data directory ${dir} is in use by the Outpost with PID ${pid} (${join(dir, LOCK_FILE)}); ` +
        'stop that one first, or give this one another --data-dir',
    );
  }
}

export interface DataDirLock {
  path: string;
  /** Removes the lock file if it is still ours. */
  release(): void;
}

/** The start time of a process (clock ticks since boot, /proc/PID/stat field 22), or '' where unknown. */
function startTime(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
}

function alive(pid: number, started: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // Same PID, other process: the owner died and its PID was given to someone else.
  const now = startTime(pid);
  return !(started && now && now !== started);
}

/** Takes DATA_DIR/outpost.lock or throws DataDirLockedError naming the live owner. */
export function lockDataDir(dir: string): DataDirLock {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw new MetabaseError(`cannot create data directory ${dir}: ${(e as Error).message}`);
  }
  const path = join(dir, LOCK_FILE);
  const mine = `${process.pid} ${startTime(process.pid)}\n`;
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o644);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 5)
        throw new MetabaseError(`cannot lock data directory ${dir}: ${(e as Error).message}`);
      let held: string;
      try {
        held = readFileSync(path, 'utf8');
      } catch {
        continue; // released in between
      }
      const [pidText = '', started = ''] = held.trim().split(' ');
      const pid = Number.parseInt(pidText, 10);
      // Our own PID: an earlier agent of this process (tests) that was not closed.
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid, started))
        throw new DataDirLockedError(dir, pid);
      // Stale: remove it only if it is still the file we read, then try again.
      try {
        if (readFileSync(path, 'utf8') === held) unlinkSync(path);
      } catch {}
      continue;
    }
    try {
      writeSync(fd, mine);
    } finally {
      closeSync(fd);
    }
    return {
      path,
      release() {
        try {
          if (readFileSync(path, 'utf8') === mine) unlinkSync(path);
        } catch {}
      },
    };
  }
}
