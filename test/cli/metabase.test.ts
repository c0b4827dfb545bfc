// `outpost snapshot`, `restore` and `doctor` on real files: a verified snapshot, a restore that
// refuses a live agent's data directory and a bad file, and keeps what it replaces; the doctor's
// full integrity_check and its exit code.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DataDirLockedError, LOCK_FILE } from '#db/lock.ts';
import { openMetabase } from '#db/open.ts';
import { doctorCommand, restoreCommand, snapshotCommand } from '#lib/cli/metabase.ts';
import { createStore } from '#lib/store/index.ts';
import { garbagePage } from '../helpers/corrupt.ts';

const capture = () => {
  let text = '';
  return {
    out: (s: string) => {
      text += s;
    },
    text: () => text,
  };
};

function seeded(names: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-cli-mb-'));
  const mb = openMetabase(dir);
  const store = createStore(mb, { host: 'edge-1' });
  for (const name of names)
    store.pods.put(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: 'default' },
        spec: { nodeName: 'edge-1', containers: [{ name: 'main', image: 'busybox' }] },
      } as never,
      'api',
    );
  mb.close();
  return dir;
}

test('snapshot, then restore it: the replaced metabase is kept; the doctor finds both sound', () => {
  const dir = seeded(['a']);
  try {
    const o = capture();
    assert.is(snapshotCommand({ dataDir: dir, keep: 3 }, o.out, o.out), 0, o.text());
    const file = o.text().split('\t')[0]!;
    assert.match(o.text(), /\tverified\n$/);
    const mb = openMetabase(dir);
    createStore(mb, { host: 'edge-1' }).pods.remove('default', 'a');
    mb.close();
    const r = capture();
    assert.is(restoreCommand({ dataDir: dir, file }, r.out, r.out), 0, r.text());
    assert.match(r.text(), 'the replaced metabase is kept as');
    assert.ok(readdirSync(dir).some((f) => /^outpost\.db\.replaced-\d{8}T\d{9}Z$/.test(f)));
    const back = openMetabase(dir);
    assert.ok(createStore(back, { host: 'edge-1' }).pods.get('default', 'a'), 'the pod is back');
    back.close();
    const d = capture();
    assert.is(doctorCommand({ dataDir: dir }, d.out), 0, d.text());
    assert.match(d.text(), 'integrity_check ok');
    assert.match(d.text(), 'snapshots in');
    assert.match(d.text(), 'not in use by a running Outpost');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('restore refuses a damaged file, and a data directory a live agent holds', async () => {
  const dir = seeded(['a']);
  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)'], { stdio: 'ignore' });
  const exited = new Promise((r) => other.once('exit', r));
  try {
    const bad = join(dir, 'bad.db');
    writeFileSync(bad, 'not a database');
    const e = capture();
    assert.is(restoreCommand({ dataDir: dir, file: bad }, e.out, e.out), 1);
    assert.match(e.text(), 'is not a sound metabase');
    const o = capture();
    assert.is(snapshotCommand({ dataDir: dir, keep: 3 }, o.out, o.out), 0);
    writeFileSync(join(dir, LOCK_FILE), `${other.pid}\n`);
    assert.throws(
      () => restoreCommand({ dataDir: dir, file: o.text().split('\t')[0]! }, e.out, e.out),
      (err: unknown) => err instanceof DataDirLockedError && (err as DataDirLockedError).pid === other.pid,
    );
    assert.ok(existsSync(join(dir, 'outpost.db')));
    assert.not.ok(
      readdirSync(dir).some((f) => f.includes('.replaced-')),
      'nothing moved',
    );
  } finally {
    other.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the doctor exits 1 on a damaged metabase and names the damage', () => {
  const dir = seeded(['a', 'b']);
  try {
    garbagePage(join(dir, 'outpost.db'));
    const d = capture();
    assert.is(doctorCommand({ dataDir: dir }, d.out), 1);
    assert.match(d.text(), /integrity_check FAILED:|cannot be read/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
