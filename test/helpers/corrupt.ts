// Damage a metabase file the ways cheap flash and power cuts do: garbage over one page (the
// `pods` table's root page, so SQLite must notice), the file cut short, the write-ahead log lost.
import {
  closeSync,
  existsSync,
  openSync,
  readSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import Database from 'better-sqlite3';

/** The page size and the root page of a table, read before the damage is done (file closed after). */
function layout(path: string, table: string): { pageSize: number; root: number } {
  const db = new Database(path, { readonly: true });
  try {
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const root = (
      db.prepare('SELECT rootpage FROM sqlite_master WHERE name = ?').get(table) as { rootpage: number }
    ).rootpage;
    return { pageSize, root };
  } finally {
    db.close();
  }
}

/** Overwrites the root page of `table` (default `pods`) with deterministic garbage. */
export function garbagePage(path: string, table = 'pods'): void {
  const { pageSize, root } = layout(path, table);
  const junk = Buffer.alloc(pageSize);
  for (let i = 0; i < pageSize; i++) junk[i] = (i * 131 + 7) & 0xff;
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, junk, 0, pageSize, (root - 1) * pageSize);
  } finally {
    closeSync(fd);
  }
}

/** Cuts the file to the first `keepPages` pages (default: half of them, at least 2). */
export function truncatePages(path: string, keepPages?: number): void {
  const fd = openSync(path, 'r');
  const header = Buffer.alloc(100);
  readSync(fd, header, 0, 100, 0);
  closeSync(fd);
  const raw = header.readUInt16BE(16);
  const pageSize = raw === 1 ? 65536 : raw;
  const pages = Math.floor(statSync(path).size / pageSize);
  truncateSync(path, pageSize * (keepPages ?? Math.max(2, Math.floor(pages / 2))));
}

/** Deletes the write-ahead log and its index, as a power cut before they reached the card can. */
export function loseWal(path: string): void {
  for (const part of ['-wal', '-shm']) if (existsSync(path + part)) unlinkSync(path + part);
}
