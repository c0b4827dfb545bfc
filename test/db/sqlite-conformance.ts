// The SQLite seam's conformance checks, runtime-neutral (node:assert, no test runner): run as they
// are by test/db/sqlite.test.ts on Node, and bundled and run by it under Deno and Bun, so each
// runtime's driver (better-sqlite3, node:sqlite, bun:sqlite) is held to the same behaviour.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { drizzleOf } from '#db/drizzle.ts';
import { MetabaseCorruptError } from '#db/integrity.ts';
import { openMetabase, SCHEMA_VERSION } from '#db/open.ts';
import { openCheckedMetabase } from '#db/recover.ts';
import { meta, pods } from '#db/schema.ts';
import { listSnapshots, takeSnapshot, verifyFile } from '#db/snapshot.ts';
import { openSqlite } from '#db/sqlite.ts';
import { aroundTransactions } from '#db/transactions.ts';

export const checks: [string, (dir: string) => void][] = [
  [
    'pragmas: WAL, synchronous FULL (NORMAL on request), foreign keys, the schema version',
    (dir) => {
      const mb = openMetabase(dir);
      assert.equal(mb.sqlite.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(mb.sqlite.pragma('synchronous', { simple: true }), 2);
      assert.equal(mb.sqlite.pragma('foreign_keys', { simple: true }), 1);
      assert.equal(mb.sqlite.pragma('busy_timeout', { simple: true }), 5000);
      assert.equal(mb.sqlite.pragma('user_version', { simple: true }), SCHEMA_VERSION);
      mb.close();
      const again = openMetabase(dir, { durability: 'normal' });
      assert.equal(again.sqlite.pragma('synchronous', { simple: true }), 1);
      again.close();
    },
  ],
  [
    'prepared statements: run, get (undefined for no row), all; rows are plain objects',
    (dir) => {
      const mb = openMetabase(dir);
      const put = mb.sqlite.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
      assert.equal(put.run('a', '1').changes, 1);
      mb.sqlite.prepare('INSERT INTO meta (key, value) VALUES (@key, @value)').run({ key: 'b', value: '2' });
      const get = mb.sqlite.prepare('SELECT value FROM meta WHERE key = ?');
      assert.deepEqual(get.get('a'), { value: '1' });
      assert.equal(Object.getPrototypeOf(get.get('a')), Object.prototype);
      assert.equal(get.get('none'), undefined);
      const rows = mb.sqlite.prepare("SELECT key FROM meta WHERE key IN ('a', 'b') ORDER BY key").all();
      assert.deepEqual(rows, [{ key: 'a' }, { key: 'b' }]);
      mb.close();
    },
  ],
  [
    'Drizzle: insert, select (array rows), update, delete, transaction',
    (dir) => {
      const mb = openMetabase(dir);
      const db = drizzleOf(mb);
      assert.equal(drizzleOf(mb), db, 'one builder per connection');
      db.insert(meta).values({ key: 'k', value: 'v' }).run();
      assert.deepEqual(db.select().from(meta).where(eq(meta.key, 'k')).all(), [{ key: 'k', value: 'v' }]);
      assert.deepEqual(db.select({ v: meta.value }).from(meta).where(eq(meta.key, 'k')).get(), { v: 'v' });
      assert.equal(db.select().from(meta).where(eq(meta.key, 'none')).get(), undefined);
      db.update(meta).set({ value: 'w' }).where(eq(meta.key, 'k')).run();
      assert.throws(() =>
        db.transaction((tx) => {
          tx.update(meta).set({ value: 'x' }).where(eq(meta.key, 'k')).run();
          throw new Error('abort');
        }),
      );
      assert.equal(db.select().from(meta).where(eq(meta.key, 'k')).get()?.value, 'w');
      const pod = { namespace: 'default', nodeName: 'n', source: 'api' as const, object: '{}' };
      db.insert(pods)
        .values({ ...pod, uid: 'u1', name: 'p1', resourceVersion: 1 })
        .run();
      assert.throws(
        () =>
          db
            .insert(pods)
            .values({ ...pod, uid: 'u2', name: 'p1', resourceVersion: 2 })
            .run(),
        (e: unknown) => /UNIQUE/.test((e as Error).message),
      );
      db.delete(meta).where(eq(meta.key, 'k')).run();
      assert.equal(db.select().from(meta).where(eq(meta.key, 'k')).all().length, 0);
      mb.close();
    },
  ],
  [
    'transactions: commit, rollback on a throw, nested ones are savepoints, aroundTransactions sees the outer',
    (dir) => {
      const mb = openMetabase(dir);
      const s = mb.sqlite;
      const put = s.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
      const has = (k: string) => s.prepare('SELECT 1 FROM meta WHERE key = ?').get(k) !== undefined;
      let outer = 0;
      aroundTransactions(s, (run) => {
        outer++;
        return run();
      });
      assert.equal(s.transaction((k: string) => put.run(k, '1').changes)('t1'), 1);
      assert.ok(has('t1'));
      assert.throws(() =>
        s.transaction(() => {
          put.run('t2', '1');
          throw new Error('abort');
        })(),
      );
      assert.ok(!has('t2'));
      assert.equal(s.inTransaction, false);
      s.transaction(() => {
        put.run('t3', '1');
        assert.equal(s.inTransaction, true);
        assert.throws(() =>
          s.transaction(() => {
            put.run('t4', '1');
            throw new Error('inner');
          })(),
        );
        s.transaction(() => put.run('t5', '1'))();
      })();
      assert.deepEqual([has('t3'), has('t4'), has('t5')], [true, false, true]);
      assert.equal(outer, 3);
      mb.close();
    },
  ],
  [
    'committed writes survive a close and reopen; snapshots are taken and verify',
    (dir) => {
      const mb = openMetabase(dir);
      mb.sqlite.prepare("INSERT INTO meta (key, value) VALUES ('kept', 'yes')").run();
      const snap = takeSnapshot(mb.sqlite, dir, { keep: 2, reason: 'manual', now: Date.now() });
      mb.close();
      assert.deepEqual(verifyFile(snap.path), { problems: [], version: SCHEMA_VERSION });
      assert.equal(listSnapshots(dir).length, 1);
      const again = openMetabase(dir);
      assert.equal(
        again.sqlite.prepare("SELECT value FROM meta WHERE key = 'kept'").get()?.constructor,
        Object,
      );
      again.close();
      const ro = openSqlite(join(dir, 'outpost.db'), { readonly: true, fileMustExist: true });
      assert.deepEqual(ro.prepare("SELECT value FROM meta WHERE key = 'kept'").get(), { value: 'yes' });
      assert.throws(() => ro.prepare("INSERT INTO meta (key, value) VALUES ('x', 'y')").run());
      ro.close();
      assert.throws(() => openSqlite(join(dir, 'missing.db'), { fileMustExist: true }));
    },
  ],
  [
    'a damaged file: corruption is told apart, and a checked open restores the newest snapshot',
    (dir) => {
      const mb = openMetabase(dir);
      mb.sqlite.prepare("INSERT INTO meta (key, value) VALUES ('before', 'damage')").run();
      takeSnapshot(mb.sqlite, dir, { keep: 2, reason: 'manual', now: Date.now() });
      mb.close();
      writeFileSync(join(dir, 'outpost.db'), Buffer.alloc(8192, 7));
      rmSync(join(dir, 'outpost.db-wal'), { force: true });
      rmSync(join(dir, 'outpost.db-shm'), { force: true });
      assert.throws(() => openMetabase(dir, { check: true }), MetabaseCorruptError);
      const restored = openCheckedMetabase(dir, { keep: 2, now: Date.now });
      assert.ok(restored.recovery?.snapshot);
      assert.deepEqual(restored.sqlite.prepare("SELECT value FROM meta WHERE key = 'before'").get(), {
        value: 'damage',
      });
      restored.close();
    },
  ],
];

/** Runs every check in its own temporary directory; returns the names of those that failed. */
export function runChecks(log: (line: string) => void): string[] {
  const failed: string[] = [];
  for (const [name, check] of checks) {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-sqlite-'));
    try {
      check(dir);
      log(`ok ${name}`);
    } catch (e) {
      failed.push(name);
      log(`FAILED ${name}: ${(e as Error).stack ?? e}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return failed;
}

// Run as a script (the bundle test/db/sqlite.test.ts makes for Deno and Bun): exit 1 on a failure.
if (process.argv.includes('--run-sqlite-checks')) {
  const failed = runChecks((line) => process.stdout.write(`${line}\n`));
  process.exit(failed.length ? 1 : 0);
}
