// Integrity on open and snapshots, on real SQLite files: a sound metabase opens as before; a
// damaged one is moved aside and replaced by the newest snapshot that verifies (or by an empty
// one, saying so); snapshots are verified, rotated, taken before a migration.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkIntegrity } from '#db/integrity.ts';
import { openMetabase, SCHEMA_VERSION } from '#db/open.ts';
import { lastRecovery, openCheckedMetabase } from '#db/recover.ts';
import { listSnapshots, takeSnapshot, verifyFile } from '#db/snapshot.ts';
import { createStore } from '#lib/store/index.ts';
import { garbagePage, truncatePages } from '../helpers/corrupt.ts';

const fresh = () => mkdtempSync(join(tmpdir(), 'outpost-recover-'));
let clock = Date.UTC(2026, 10, 26, 12, 0, 0);
const now = () => (clock += 1000);

const pod = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { nodeName: 'edge-1', containers: [{ name: 'main', image: 'busybox' }] },
});

/** A metabase with `names` as API pods, closed (WAL checkpointed into the file). */
function seed(dir: string, names: string[], snapshotAfter?: number): void {
  const mb = openCheckedMetabase(dir, { keep: 3, now });
  const store = createStore(mb, { host: 'edge-1' });
  names.forEach((n, i) => {
    store.pods.put(pod(n) as never, 'api');
    if (snapshotAfter === i) takeSnapshot(mb.sqlite, dir, { keep: 3, reason: 'scheduled', now: now() });
  });
  mb.close();
}
const podNames = (dir: string) => {
  const mb = openMetabase(dir);
  try {
    return (mb.sqlite.prepare('SELECT name FROM pods ORDER BY name').all() as { name: string }[]).map(
      (r) => r.name,
    );
  } finally {
    mb.close();
  }
};

test('a sound metabase opens with no recovery', () => {
  const dir = fresh();
  try {
    seed(dir, ['a', 'b']);
    const mb = openCheckedMetabase(dir, { keep: 3, now });
    assert.is(mb.recovery, undefined);
    assert.is(lastRecovery(mb.sqlite), undefined);
    mb.close();
    assert.equal(podNames(dir), ['a', 'b']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('snapshots verify, carry the data of their moment, and only the newest N are kept', () => {
  const dir = fresh();
  try {
    const mb = openMetabase(dir);
    const store = createStore(mb, { host: 'edge-1' });
    for (let i = 0; i < 5; i++) {
      store.pods.put(pod(`p${i}`) as never, 'api');
      takeSnapshot(mb.sqlite, dir, { keep: 3, reason: 'scheduled', now: now() });
    }
    mb.close();
    const snaps = listSnapshots(dir);
    assert.is(snaps.length, 3);
    assert.ok(snaps[0]!.takenAt > snaps[1]!.takenAt, 'newest first');
    const v = verifyFile(snaps[0]!.path);
    assert.equal(v, { problems: [], version: SCHEMA_VERSION });
    const db = new Database(snaps[2]!.path, { readonly: true });
    assert.is(
      (db.prepare('SELECT count(*) AS n FROM pods').get() as { n: number }).n,
      3,
      'the third of five',
    );
    db.close();
    assert.not.ok(readdirSync(join(dir, 'snapshots')).some((f) => f.endsWith('.tmp')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a garbage page: moved aside, the newest snapshot restored, a new identity, the rest named as lost', () => {
  const dir = fresh();
  try {
    seed(dir, ['a', 'b', 'c'], 1); // snapshot after a and b
    const before = new Database(join(dir, 'outpost.db'), { readonly: true });
    const oldId = (
      before.prepare("SELECT value FROM meta WHERE key = 'metabase_id'").get() as
        | { value: string }
        | undefined
    )?.value;
    before.close();
    garbagePage(join(dir, 'outpost.db'));
    const mb = openCheckedMetabase(dir, { keep: 3, now });
    const r = mb.recovery!;
    assert.ok(r, 'recovered');
    assert.ok(r.problems.length > 0);
    assert.ok(r.snapshot, 'from a snapshot');
    assert.match(r.lost, 'changes after the snapshot');
    assert.ok(existsSync(r.movedTo), 'the damaged file is kept');
    assert.match(r.movedTo, /outpost\.db\.corrupt-\d{8}T\d{9}Z$/);
    assert.equal(checkIntegrity(mb.sqlite, 'full'), []);
    const id = (
      mb.sqlite.prepare("SELECT value FROM meta WHERE key = 'metabase_id'").get() as { value: string }
    ).value;
    assert.is.not(id, oldId);
    const rv = Number(
      (mb.sqlite.prepare("SELECT value FROM meta WHERE key = 'rv'").get() as { value: string }).value,
    );
    assert.ok(rv > 1_000_000, 'the resourceVersion jumped: watches from before answer 410 and relist');
    assert.equal(lastRecovery(mb.sqlite), r);
    mb.close();
    assert.equal(podNames(dir), ['a', 'b']);
    // The next start finds a sound file: no second recovery.
    const again = openCheckedMetabase(dir, { keep: 3, now });
    assert.is(again.recovery, undefined);
    again.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('truncated, no snapshot: an empty metabase, and what was lost is said', () => {
  const dir = fresh();
  try {
    seed(
      dir,
      Array.from({ length: 60 }, (_, i) => `pod-${i}`),
    );
    truncatePages(join(dir, 'outpost.db'));
    const mb = openCheckedMetabase(dir, { keep: 3, now });
    assert.ok(mb.recovery);
    assert.is(mb.recovery!.snapshot, undefined);
    assert.match(mb.recovery!.lost, 'no snapshot verified');
    assert.match(mb.recovery!.lost, 'objects created or changed through the API');
    assert.is((mb.sqlite.prepare('SELECT count(*) AS n FROM pods').get() as { n: number }).n, 0);
    mb.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('not a database at all (page 1 overwritten): recovered, and a bad snapshot is skipped', () => {
  const dir = fresh();
  try {
    seed(dir, ['a'], 0);
    // A newer snapshot that is itself damaged must not be used.
    writeFileSync(join(dir, 'snapshots', 'outpost-20991231T000000000Z-scheduled.db'), 'not sqlite');
    writeFileSync(join(dir, 'outpost.db'), Buffer.alloc(8192, 0x5a));
    const mb = openCheckedMetabase(dir, { keep: 3, now });
    assert.ok(mb.recovery?.snapshot);
    assert.not.match(mb.recovery!.snapshot!.path, '2099');
    mb.close();
    assert.equal(podNames(dir), ['a']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a migration is preceded by a snapshot of the old schema', () => {
  const dir = fresh();
  try {
    openMetabase(dir).close();
    const raw = new Database(join(dir, 'outpost.db'));
    raw.exec('DROP TABLE outbox');
    raw.pragma(`user_version = ${SCHEMA_VERSION - 1}`);
    raw.close();
    const mb = openCheckedMetabase(dir, { keep: 3, now });
    assert.is(mb.sqlite.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    mb.close();
    const snaps = listSnapshots(dir);
    assert.is(snaps.length, 1);
    assert.is(snaps[0]!.reason, `before-v${SCHEMA_VERSION}`);
    assert.is(verifyFile(snaps[0]!.path).version, SCHEMA_VERSION - 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
