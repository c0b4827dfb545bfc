// The one seam between Outpost and a SQLite driver, chosen at start by the runtime: better-sqlite3
// on Node, bun:sqlite on Bun, node:sqlite on Deno (Deno cannot load better-sqlite3's legacy addon,
// Bun does not support it). The interface is better-sqlite3's (the stores and Drizzle's
// better-sqlite3 session are written against it); on Bun and Deno a small adapter gives the part of
// it Outpost uses, with the same results: `get` answers undefined for no row, rows are plain
// objects, errors carry SQLite's code name (`SQLITE_FULL`, `SQLITE_CORRUPT`, ...).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { type RuntimeName, runtime } from '#lib/runtime.ts';

export type Sqlite = BetterSqlite3.Database;
export type Statement<P extends unknown[] = unknown[], R = unknown> = BetterSqlite3.Statement<P, R>;

export interface SqliteOpenOptions {
  readonly?: boolean;
  /** Fail instead of creating the file. */
  fileMustExist?: boolean;
}

/** The driver each runtime uses. */
export const SQLITE_DRIVERS: Record<RuntimeName, string> = {
  node: 'better-sqlite3',
  bun: 'bun:sqlite',
  deno: 'node:sqlite',
};

// Loaded on first open by name (not a static import): each runtime loads only its own driver, and
// the bundle keeps better-sqlite3 (a native addon) external.
const load = createRequire(import.meta.url);

/** Opens a SQLite database file (or `:memory:`) with this runtime's driver. */
export function openSqlite(path: string, opts: SqliteOpenOptions = {}): Sqlite {
  if (runtime === 'bun') return bunSqlite(path, opts);
  if (runtime === 'deno') return nodeSqlite(path, opts);
  const Database = load('better-sqlite3') as typeof BetterSqlite3;
  const nativeBinding = addonPath();
  return new Database(path, nativeBinding ? { ...opts, nativeBinding } : opts);
}

let addon: string | undefined | null = null;

/**
 * better-sqlite3's addon where an npm install (build/Release) or a release tarball
 * (lib/binding/node-vABI-PLATFORM-ARCH, one per Node ABI) puts it, so that `bindings` need not try
 * a dozen paths first (each a failed require, milliseconds of every start on a board); undefined
 * when neither is there, and `bindings` searches as before.
 */
function addonPath(): string | undefined {
  if (addon !== null) return addon;
  const dir = dirname(dirname(load.resolve('better-sqlite3'))); // its main is lib/index.js
  const abi = `node-v${process.versions.modules}-${process.platform}-${process.arch}`;
  addon = [join(dir, 'build', 'Release'), join(dir, 'lib', 'binding', abi)]
    .map((d) => join(d, 'better_sqlite3.node'))
    .find((f) => existsSync(f));
  return addon;
}

// SQLite's primary result codes Outpost tells apart (db/disk.ts, db/integrity.ts), by number.
const CODES: Record<number, string> = {
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  19: 'SQLITE_CONSTRAINT',
  26: 'SQLITE_NOTADB',
  5: 'SQLITE_BUSY',
  1: 'SQLITE_ERROR',
};

/** node:sqlite's errors say `ERR_SQLITE_ERROR` with the number apart: give them better-sqlite3's code. */
function withCode(e: unknown): unknown {
  const err = e as { code?: unknown; errcode?: unknown };
  if (err && typeof err.errcode === 'number' && err.code === 'ERR_SQLITE_ERROR') {
    err.code = CODES[err.errcode & 0xff] ?? `SQLITE_${err.errcode}`;
  }
  return e;
}

function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw withCode(e);
  }
}

/** What the adapters share: transactions as better-sqlite3 makes them (savepoints when nested). */
abstract class Adapter {
  abstract exec(sql: string): this;
  abstract get inTransaction(): boolean;
  abstract prepare(sql: string): unknown;

  pragma(source: string, opts: { simple?: boolean } = {}): unknown {
    const rows = (this.prepare(`PRAGMA ${source}`) as { all(): Record<string, unknown>[] }).all();
    return opts.simple ? Object.values(rows[0] ?? {})[0] : rows;
  }

  transaction<F extends (...args: never[]) => unknown>(fn: F) {
    const make =
      (begin: string) =>
      (...args: Parameters<F>): ReturnType<F> => {
        const nested = this.inTransaction;
        this.exec(nested ? 'SAVEPOINT outpost_tx' : begin);
        try {
          const result = fn(...args) as ReturnType<F>;
          this.exec(nested ? 'RELEASE outpost_tx' : 'COMMIT');
          return result;
        } catch (e) {
          // A failed COMMIT (SQLITE_FULL) may have rolled back already.
          if (nested) this.exec('ROLLBACK TO outpost_tx').exec('RELEASE outpost_tx');
          else if (this.inTransaction) this.exec('ROLLBACK');
          throw e;
        }
      };
    const deferred = make('BEGIN');
    return Object.assign(deferred, {
      default: deferred,
      deferred,
      immediate: make('BEGIN IMMEDIATE'),
      exclusive: make('BEGIN EXCLUSIVE'),
    });
  }
}

type Row = Record<string, unknown>;
interface NativeStatement {
  run(...p: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...p: unknown[]): Row | null | undefined;
  all(...p: unknown[]): Row[];
}

/** A statement with better-sqlite3's run/get/all/raw over a native one of bun:sqlite or node:sqlite. */
class AdaptedStatement {
  #asArrays = false;
  constructor(
    private readonly native: NativeStatement,
    private readonly arrays: () => NativeStatement,
  ) {}
  run(...p: unknown[]) {
    return guard(() => this.native.run(...p));
  }
  get(...p: unknown[]) {
    const row = guard(() => (this.#asArrays ? this.arrays() : this.native).get(...p));
    return row == null ? undefined : this.#asArrays ? row : { ...row };
  }
  all(...p: unknown[]) {
    const rows = guard(() => (this.#asArrays ? this.arrays() : this.native).all(...p));
    return this.#asArrays ? rows : rows.map((r) => ({ ...r }));
  }
  /** Rows as arrays of column values (Drizzle reads joins this way). */
  raw(on = true): this {
    this.#asArrays = on;
    return this;
  }
}

interface BunDatabase {
  exec(sql: string): void;
  prepare(sql: string): NativeStatement & { values(...p: unknown[]): unknown[][] };
  readonly inTransaction: boolean;
  close(): void;
}

class BunSqlite extends Adapter {
  #open = true;
  constructor(private readonly db: BunDatabase) {
    super();
  }
  get open() {
    return this.#open;
  }
  get inTransaction() {
    return this.db.inTransaction;
  }
  exec(sql: string): this {
    guard(() => this.db.exec(sql));
    return this;
  }
  prepare(sql: string) {
    const stmt = guard(() => this.db.prepare(sql));
    const arrays = {
      run: stmt.run.bind(stmt),
      get: (...p: unknown[]) => (stmt.values(...p)[0] ?? null) as unknown as Row,
      all: (...p: unknown[]) => stmt.values(...p) as unknown as Row[],
    };
    return new AdaptedStatement(stmt, () => arrays);
  }
  close() {
    this.#open = false;
    this.db.close();
  }
}

function bunSqlite(path: string, opts: SqliteOpenOptions): Sqlite {
  const { Database } = load('bun:sqlite') as { Database: new (p: string, o: object) => BunDatabase };
  // strict: named parameters bind from plain keys (`@name` ← { name }) as better-sqlite3 does.
  const o = opts.readonly
    ? { readonly: true, strict: true }
    : { readwrite: true, create: !opts.fileMustExist, strict: true };
  return new BunSqlite(guard(() => new Database(path, o))) as unknown as Sqlite;
}

interface NodeSqliteDatabase {
  exec(sql: string): void;
  prepare(sql: string): NativeStatement & { setReturnArrays(on: boolean): void };
  readonly isTransaction: boolean;
  readonly isOpen: boolean;
  close(): void;
}

class NodeSqlite extends Adapter {
  constructor(private readonly db: NodeSqliteDatabase) {
    super();
  }
  get open() {
    return this.db.isOpen;
  }
  get inTransaction() {
    return this.db.isTransaction;
  }
  exec(sql: string): this {
    guard(() => this.db.exec(sql));
    return this;
  }
  prepare(sql: string) {
    const stmt = guard(() => this.db.prepare(sql));
    let arrays: NativeStatement | undefined;
    return new AdaptedStatement(stmt, () => {
      if (!arrays) {
        arrays = this.db.prepare(sql);
        (arrays as ReturnType<NodeSqliteDatabase['prepare']>).setReturnArrays(true);
      }
      return arrays;
    });
  }
  close() {
    this.db.close();
  }
}

function nodeSqlite(path: string, opts: SqliteOpenOptions): Sqlite {
  const { DatabaseSync } = load('node:sqlite') as {
    DatabaseSync: new (p: string, o: object) => NodeSqliteDatabase;
  };
  if ((opts.fileMustExist || opts.readonly) && path !== ':memory:') {
    if (!existsSync(path)) {
      throw Object.assign(new Error(`unable to open database file: ${path}`), { code: 'SQLITE_CANTOPEN' });
    }
  }
  return new NodeSqlite(
    guard(() => new DatabaseSync(path, { readOnly: Boolean(opts.readonly) })),
  ) as unknown as Sqlite;
}
