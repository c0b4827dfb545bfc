// Disk pressure from failed writes: only a lack of space counts, the 503 names the data directory
// and its free bytes, a failed transaction leaves nothing behind, and a probe write ends it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import { createStore } from '#lib/store/index.ts';

const full = () => Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });

test('a write failing with SQLITE_FULL puts the store under pressure; a probe write ends it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-disk-'));
  const mb = openMetabase(dir);
  try {
    const store = createStore(mb, { host: 'edge-1' });
    const changes: boolean[] = [];
    store.disk.onChange((f) => changes.push(f !== undefined));
    assert.not.ok(store.disk.noteError(new Error('no such table')), 'other errors are not pressure');
    assert.is(store.disk.full, undefined);
    // A transaction that fails half-way: rolled back whole, and noted.
    assert.throws(() =>
      mb.sqlite.transaction(() => {
        mb.sqlite.prepare("INSERT INTO meta (key, value) VALUES ('half', 'written')").run();
        throw full();
      })(),
    );
    assert.is(mb.sqlite.prepare("SELECT value FROM meta WHERE key = 'half'").get(), undefined);
    assert.ok(store.disk.full);
    assert.is(store.disk.full!.error, 'database or disk is full');
    const status = store.disk.unavailable().toStatus();
    assert.is(status.code, 503);
    assert.is(status.reason, 'ServiceUnavailable');
    assert.match(status.message, `no space left in the data directory ${dir} (`);
    assert.match(status.message, /\(\d+ bytes free\)/);
    // This machine's disk has room: the probe commits and the pressure ends.
    assert.not.ok(store.disk.probe());
    assert.is(store.disk.full, undefined);
    assert.equal(changes, [true, false]);
  } finally {
    mb.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
