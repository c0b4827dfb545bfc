import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MetabaseError, openMetabase, SCHEMA_VERSION } from '#db/open.ts';
import { renderMigrations } from '../../scripts/gen-migrations.ts';

test('the metabase is WAL with full durability and the current schema version', () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-db-'));
  const mb = openMetabase(dir);
  assert.is(mb.sqlite.pragma('journal_mode', { simple: true }), 'wal');
  assert.is(mb.sqlite.pragma('synchronous', { simple: true }), 2);
  assert.is(mb.sqlite.pragma('user_version', { simple: true }), SCHEMA_VERSION);
  mb.close();
  const again = openMetabase(dir, { durability: 'normal' });
  assert.is(again.sqlite.pragma('synchronous', { simple: true }), 1);
  again.close();
  rmSync(dir, { recursive: true });
});

test('a metabase written by a newer Outpost is refused and left untouched', () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-db-'));
  openMetabase(dir).close();
  const raw = new Database(join(dir, 'outpost.db'));
  raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
  raw.exec('CREATE TABLE future (x)');
  raw.close();
  assert.throws(
    () => openMetabase(dir),
    (e: unknown) => e instanceof MetabaseError && /newer Outpost/.test((e as Error).message),
  );
  const after = new Database(join(dir, 'outpost.db'));
  assert.is(after.pragma('user_version', { simple: true }), SCHEMA_VERSION + 1);
  assert.ok(after.prepare("SELECT name FROM sqlite_master WHERE name = 'future'").get());
  after.close();
  rmSync(dir, { recursive: true });
});

test('db/migrations.gen.ts is up to date with db/migrations (run `npm run gen`)', () => {
  const committed = readFileSync(join(import.meta.dirname, '../../db/migrations.gen.ts'), 'utf8');
  assert.is(committed, renderMigrations());
});

test.run();
