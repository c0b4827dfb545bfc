import Database from 'better-sqlite3';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { settle } from '#lib/clock.ts';
import { WriteBatch } from '#lib/pods/worker/write-batch.ts';

function setup() {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
  const errors: unknown[] = [];
  const batch = new WriteBatch(db, (e) => errors.push(e));
  const put = (k: string, v: number | null) => () =>
    void db.prepare('INSERT OR REPLACE INTO t (k, v) VALUES (?, ?)').run(k, v);
  const rows = () => db.prepare('SELECT k, v FROM t ORDER BY k').all();
  return { db, batch, errors, put, rows };
}

test('writes of one turn are committed together on the next, in order, in one transaction', async () => {
  const { db, batch, put, rows } = setup();
  const seen: boolean[] = [];
  batch.add(put('a', 1));
  batch.add(() => seen.push(db.inTransaction));
  batch.add(put('a', 2));
  batch.add(put('b', 1));
  assert.equal(rows(), [], 'nothing written synchronously');
  await settle();
  assert.equal(rows(), [
    { k: 'a', v: 2 },
    { k: 'b', v: 1 },
  ]);
  assert.equal(seen, [true]);
  assert.is(db.inTransaction, false);
});

test('a failing write is undone alone and reported; the others are committed', async () => {
  const { batch, errors, put, rows } = setup();
  batch.add(put('a', 1));
  batch.add(() => {
    put('x', 1)();
    put('y', null)(); // NOT NULL: throws after x was written
  });
  batch.add(put('b', 1));
  await settle();
  assert.equal(rows(), [
    { k: 'a', v: 1 },
    { k: 'b', v: 1 },
  ]);
  assert.is(errors.length, 1);
  assert.match(String(errors[0]), /NOT NULL/);
});

test('flush() commits what is queued at once; a closed database drops it', async () => {
  const { db, batch, put, rows } = setup();
  batch.add(put('a', 1));
  batch.flush();
  assert.equal(rows(), [{ k: 'a', v: 1 }]);
  batch.add(put('b', 1));
  db.close();
  await settle(); // no throw
});

test.run();
