// kill -9 in the middle of a burst of status writes: the metabase must come back intact
// (`PRAGMA integrity_check` = ok) and hold every write the writer saw committed. The writer is a
// child process that reports each sequence number on stdout only after its commits returned.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import type { PodStatus } from '#lib/kube/types.ts';
import { createStore } from '#lib/store/index.ts';

const root = join(import.meta.dirname, '../..');
const PODS = 16;

// argv: <dir> <durability>. Writes pods, prints "ready", then forever: one status patch and one
// event carrying `seq N`, each its own transaction, and prints N once both returned.
const WRITER = `
import { writeSync } from 'node:fs';
import { openMetabase } from ${JSON.stringify(pathToFileURL(join(root, 'db/open.ts')).href)};
import { createStore } from ${JSON.stringify(pathToFileURL(join(root, 'lib/store/index.ts')).href)};
const [dir, durability] = process.argv.slice(2);
const store = createStore(openMetabase(dir, { durability }), { host: 'edge-1' });
store.outbox.enabled = true;
const uids = [];
for (let i = 0; i < ${PODS}; i++) {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' + i, namespace: 'default' },
    spec: { nodeName: 'edge-1', containers: [{ name: 'main', image: 'busybox' }] } };
  store.pods.put(pod, 'api');
  uids.push(store.pods.record('default', 'p' + i).uid);
}
writeSync(1, 'ready\\n');
for (let seq = 1; ; seq++) {
  const i = seq % ${PODS};
  store.pods.setStatus(uids[i], { phase: 'Running', message: 'seq ' + seq,
    containerStatuses: [{ name: 'main', ready: true, restartCount: seq, image: 'busybox', imageID: '', state: { running: {} } }] });
  store.events.record({ kind: 'Pod', namespace: 'default', name: 'p' + i, uid: uids[i] }, 'Normal', 'Seq', 'seq ' + seq);
  writeSync(1, seq + '\\n');
}
`;

/** Runs the writer until it acknowledged `atLeast` writes, kills it with SIGKILL, returns the acknowledged seqs. */
function burstThenKill(dir: string, durability: string, atLeast: number): Promise<number[]> {
  const script = join(dir, 'writer.mts');
  writeFileSync(script, WRITER);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, join(dir, 'data'), durability], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let killed = false;
    const guard = setTimeout(() => child.kill('SIGKILL'), 120_000); // a bound, not a timing assertion
    child.stdout.on('data', (d) => {
      out += d;
      if (!killed && /\n(\d+)\n$/.exec(out) && Number(/(\d+)\n$/.exec(out)![1]) >= atLeast) {
        killed = true;
        child.kill('SIGKILL'); // mid-burst: the writer never stops on its own
      }
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(guard);
      if (signal !== 'SIGKILL' || !killed) {
        reject(new Error(`writer ended with ${signal ?? code} before the kill:\n${err}`));
        return;
      }
      // Only complete lines were acknowledged; a line cut by the kill was not.
      const lines = out.split('\n').slice(0, -1);
      assert.is(lines[0], 'ready', err);
      resolve(lines.slice(1).map(Number));
    });
  });
}

for (const durability of ['full', 'normal']) {
  test(`kill -9 during status writes (durability ${durability}): intact, no acknowledged write lost`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-crash-'));
    try {
      const acked = await burstThenKill(dir, durability, 300);
      assert.ok(acked.length >= 300);
      assert.equal(
        acked,
        Array.from({ length: acked.length }, (_, i) => i + 1),
        'seqs in order, none skipped',
      );

      const mb = openMetabase(join(dir, 'data'));
      try {
        assert.equal(mb.sqlite.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
        const store = createStore(mb, { host: 'edge-1' });
        // Every acknowledged event is there (the writer may have committed one more unacknowledged).
        const messages = new Set(
          (
            mb.sqlite.prepare(`SELECT json_extract(object, '$.message') AS m FROM events`).all() as {
              m: string;
            }[]
          ).map((r) => r.m),
        );
        const lost = acked.filter((seq) => !messages.has(`seq ${seq}`));
        assert.equal(lost, [], 'events acknowledged but missing');
        // Each pod's status is its last acknowledged write, or a later one.
        for (let i = 0; i < PODS; i++) {
          const last = acked.filter((seq) => seq % PODS === i).at(-1) ?? 0;
          const status = store.pods.get('default', `p${i}`)?.status as PodStatus;
          const stored = Number(/^seq (\d+)$/.exec(status.message ?? 'seq 0')?.[1]);
          assert.ok(stored >= last, `pod p${i}: status seq ${stored} is older than acknowledged ${last}`);
          assert.is(status.containerStatuses?.[0]?.restartCount, stored, 'the patch is whole, not torn');
        }
        const { n } = mb.sqlite.prepare('SELECT count(*) AS n FROM pod_status').get() as { n: number };
        assert.is(n, PODS);
        // The cloud link's outbox committed with each change: every acknowledged event waits in
        // it, and each pod's pending status is exactly the stored one.
        const entries = store.outbox.peek(1_000_000);
        const queued = new Set(
          entries.filter((e) => e.kind === 'event').map((e) => (e.payload as { message: string }).message),
        );
        assert.equal(
          acked.filter((seq) => !queued.has(`seq ${seq}`)),
          [],
          'events acknowledged but not in the outbox',
        );
        for (const e of entries.filter((x) => x.kind === 'status')) {
          const row = mb.sqlite.prepare('SELECT patch FROM pod_status WHERE uid = ?').get(e.key) as {
            patch: string;
          };
          assert.equal((e.payload as { status: unknown }).status, JSON.parse(row.patch));
        }
        assert.is(entries.filter((x) => x.kind === 'status').length, PODS);
      } finally {
        mb.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test.run();
