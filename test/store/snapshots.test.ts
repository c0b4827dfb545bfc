// The snapshot schedule on a manual clock: the first one after the settling time, then one per
// interval, the newest N kept, outcomes reported; none while the disk is known to be full.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import { listSnapshots } from '#db/snapshot.ts';
import { ManualClock } from '#lib/clock.ts';
import { silentLogger } from '#lib/log.ts';
import { createStore } from '#lib/store/index.ts';
import { SnapshotSchedule } from '#lib/store/snapshots.ts';

test('snapshots on schedule: first after settling, then every interval, newest 2 kept, none while full', () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-schedule-'));
  const mb = openMetabase(dir);
  const clock = new ManualClock(Date.UTC(2026, 10, 26, 12, 0, 0));
  const results: string[] = [];
  const store = createStore(mb, { host: 'edge-1', now: () => clock.now() });
  const schedule = new SnapshotSchedule({
    store,
    dataDir: dir,
    intervalMs: 60_000,
    keep: 2,
    clock,
    log: silentLogger,
    onResult: (r) => results.push(r),
  });
  try {
    schedule.start();
    clock.advance(29_999);
    assert.is(listSnapshots(dir).length, 0, 'not before the settling time');
    clock.advance(1);
    assert.is(listSnapshots(dir).length, 1);
    clock.advance(60_000 * 3);
    const snaps = listSnapshots(dir);
    assert.is(snaps.length, 2, 'the newest two kept');
    assert.is(snaps[0]!.takenAt, clock.now());
    assert.is(snaps[0]!.reason, 'scheduled');
    assert.equal(results, ['ok', 'ok', 'ok', 'ok']);
    // Out of space: skipped and counted as failed, the schedule goes on.
    store.disk.noteError(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }));
    const newest = listSnapshots(dir)[0]!.path;
    clock.advance(60_000);
    assert.is(listSnapshots(dir)[0]!.path, newest);
    assert.is(results.at(-1), 'failed');
    assert.not.ok(store.disk.probe(), 'space here: the probe ends the pressure');
    clock.advance(60_000);
    assert.is(results.at(-1), 'ok');
  } finally {
    schedule.stop();
    assert.is(clock.pending, 0, 'stop clears the timer');
    mb.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
