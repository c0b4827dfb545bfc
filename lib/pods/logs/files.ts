// The files behind one container log: the current one and the rotated ones beside it, read as
// chunks. CRI only names the current file; rotation (by Outpost's log manager, logrotate or
// kubelet's container log manager) leaves the older lines in siblings of it.
import {
  constants,
  createReadStream,
  type FSWatcher,
  lstatSync,
  openSync,
  readdirSync,
  statSync,
  watch,
} from 'node:fs';
import { type FileHandle, lstat, open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';

const CHUNK = 64 * 1024;
// Never follow a link out of the log directory.
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW;

// `0.log.1`, `0.log.2.gz` (logrotate: a higher number is older) and `0.log.20240131-235959[.gz]`
// (kubelet: the rotation time).
const ROTATED = /^\.(?:(\d{1,6})|(\d{8}-\d{6}))(\.gz)?$/;

/** The rotated siblings of a container log file, oldest first. */
export function rotatedLogs(path: string): string[] {
  const base = basename(path);
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return [];
  }
  const found: { path: string; n?: number; stamp?: string; mtime: number }[] = [];
  for (const name of names) {
    if (!name.startsWith(base)) continue;
    const m = ROTATED.exec(name.slice(base.length));
    if (!m) continue;
    const file = join(dirname(path), name);
    const st = lstatSync(file, { throwIfNoEntry: false });
    if (!st?.isFile()) continue; // links are not followed out of the log directory
    found.push({
      path: file,
      mtime: st.mtimeMs,
      ...(m[1] !== undefined ? { n: Number(m[1]) } : { stamp: m[2] ?? '' }),
    });
  }
  // While a rotated file is being compressed both it and its `.gz` exist: read it once.
  const plain = new Set(found.map((f) => f.path));
  return found
    .filter((f) => !(f.path.endsWith('.gz') && plain.has(f.path.slice(0, -3))))
    .sort((a, b) => {
      if (a.n !== undefined && b.n !== undefined) return b.n - a.n;
      if (a.stamp !== undefined && b.stamp !== undefined) return a.stamp < b.stamp ? -1 : 1;
      return a.mtime - b.mtime; // two schemes side by side: the last write decides
    })
    .map((f) => f.path);
}

/** The last modification of a file in nanoseconds, or undefined when it cannot be read. */
export function modifiedNs(path: string): bigint | undefined {
  try {
    return statSync(path, { bigint: true }).mtimeNs;
  } catch {
    return undefined;
  }
}

/** The chunks of a rotated file, decompressed when it ends in `.gz`. */
export function readWhole(path: string): AsyncIterable<Buffer> {
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch (e) {
    // Compressed by the log rotation since it was listed.
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || path.endsWith('.gz')) throw e;
    return readWhole(`${path}.gz`);
  }
  const raw = createReadStream(path, { fd, highWaterMark: CHUNK });
  if (!path.endsWith('.gz')) return raw;
  // pipeline() carries a read error to the gunzip stream, which the reader iterates.
  return pipeline(raw, createGunzip(), () => {});
}

/** Reads a growing file chunk by chunk and notices when it is rotated or truncated under it. */
export class FileTail {
  readonly path: string;
  #fh: FileHandle | undefined;
  #ino = 0n;
  #pos = 0;
  /** Another file has the path now: the rest of the old one is read first, then the new one. */
  #switching = false;

  constructor(path: string) {
    this.path = path;
  }

  async #open(): Promise<boolean> {
    try {
      this.#fh = await open(this.path, READ_FLAGS);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false; // not written yet
      throw e;
    }
    this.#ino = (await this.#fh.stat({ bigint: true })).ino;
    this.#pos = 0;
    return true;
  }

  /** The next chunk, or undefined at the end of what is written so far (or while there is no file). */
  async next(): Promise<Buffer | undefined> {
    if (!this.#fh && !(await this.#open())) return undefined;
    const buf = Buffer.allocUnsafe(CHUNK);
    const { bytesRead } = await this.#fh!.read(buf, 0, CHUNK, this.#pos);
    if (bytesRead === 0) {
      if (!this.#switching) return undefined;
      this.#switching = false;
      await this.close();
      return this.next();
    }
    this.#pos += bytesRead;
    return buf.subarray(0, bytesRead);
  }

  /**
   * Called at the end of the file: true when another file now has the path (rotation) or the file
   * shrank (copytruncate); the next read starts at the beginning of the new content.
   */
  async moved(): Promise<boolean> {
    if (!this.#fh) return false;
    let st: { ino: bigint; size: bigint };
    try {
      st = await lstat(this.path, { bigint: true });
    } catch {
      return false; // renamed away and not created again yet
    }
    if (st.ino !== this.#ino) {
      // Rotated: the runtime may have written to the renamed file after the last read and before it
      // reopened the path (CRI ReopenContainerLog); that rest is read before the new file.
      this.#switching = true;
      return true;
    }
    if (st.size < BigInt(this.#pos)) {
      this.#pos = 0;
      return true;
    }
    return false;
  }

  async close(): Promise<void> {
    const fh = this.#fh;
    this.#fh = undefined;
    await fh?.close().catch(() => {});
  }
}

/** Wakes a follower when anything in a directory changes; a plain timer when it cannot be watched. */
export class DirWatch {
  #watcher: FSWatcher | undefined;
  #changed = false;
  #wake: (() => void) | undefined;

  constructor(dir: string) {
    try {
      this.#watcher = watch(dir, { persistent: false }, () => {
        this.#changed = true;
        this.#wake?.();
      });
      this.#watcher.on('error', () => this.close());
    } catch {
      this.#watcher = undefined;
    }
  }

  /** Whether the directory is watched (otherwise callers should poll more often). */
  get watching(): boolean {
    return this.#watcher !== undefined;
  }

  /** Resolves true on a change (or one since the last call), false after `ms` or when `signal` aborts. */
  wait(ms: number, signal: AbortSignal): Promise<boolean> {
    if (this.#changed || signal.aborted) {
      const changed = this.#changed;
      this.#changed = false;
      return Promise.resolve(changed);
    }
    return new Promise((resolve) => {
      const done = (changed: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', aborted);
        this.#wake = undefined;
        this.#changed = false;
        resolve(changed);
      };
      const aborted = () => done(false);
      const timer = setTimeout(() => done(false), ms);
      signal.addEventListener('abort', aborted, { once: true });
      this.#wake = () => done(true);
    });
  }

  close(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
  }
}
