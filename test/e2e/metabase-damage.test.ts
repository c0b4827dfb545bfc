// Copies of a real metabase (written by the bundle running two pods on containerd), damaged the
// ways power cuts on cheap flash do, each given to a new agent: a garbage page (a snapshot is
// restored), the file cut short with no snapshot (rebuilt from the manifests and the runtime), the
// write-ahead log lost. Every time the damaged file is kept, the running pods are adopted (same
// containers, nothing restarted), and the recovery shows in the log, an event, /readyz?verbose and
// /metrics; `outpost doctor` finds the new metabase sound.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import { garbagePage, loseWal, truncatePages } from '../helpers/corrupt.ts';
import { labOrSkip, removeSandboxes, waitFor } from '../helpers/lab.ts';
import { ensureBundle, type OutpostProcess, spawnOutpost } from '../helpers/outpost-process.ts';

const lab = await labOrSkip('test/e2e/metabase-damage.test.ts');
if (lab) {
  const bundle = ensureBundle();
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-damage-'));
  const ns = `dmg-${Math.random().toString(36).slice(2, 7)}`;
  const manifests = join(dir, 'manifests');
  mkdirSync(manifests);
  const image = lab.images.app;
  const pod = (name: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${image}\n      imagePullPolicy: IfNotPresent\n      command: ["sh", "-c", "exec sleep 3600"]\n`;
  writeFileSync(join(manifests, 'pods.yaml'), [pod('alpha'), pod('beta')].join('---\n'));
  const cri = new CriClient({ endpoint: lab.endpoint });
  const started: OutpostProcess[] = [];
  const start = async (dataDir: string, interval = '0') => {
    const p = await spawnOutpost({
      dataDir,
      runtimeEndpoint: lab.endpoint,
      nodeName: 'dmg-node',
      manifests,
      args: ['--snapshot-interval', interval, '--snapshot-keep', '2'],
    });
    started.push(p);
    return p;
  };
  const outpost = (...args: string[]) => spawnSync(process.execPath, [bundle, ...args], { encoding: 'utf8' });
  const podsOf = async (p: OutpostProcess): Promise<Pod[]> =>
    ((await (await fetch(`${p.url}/api/v1/namespaces/${ns}/pods`)).json()) as { items: Pod[] }).items;
  /** name → running container IDs, once both pods run. */
  const running = (p: OutpostProcess) =>
    waitFor(async () => {
      const pods = await podsOf(p);
      const ok =
        pods.length === 2 &&
        pods.every(
          (x) =>
            x.status?.phase === 'Running' &&
            (x.status.containerStatuses ?? []).every((s) => s.state?.running && s.containerID),
        );
      return (
        ok &&
        Object.fromEntries(
          pods.map((x) => [
            x.metadata.name!,
            x.status!.containerStatuses!.map((s) => [s.containerID, s.restartCount]),
          ]),
        )
      );
    }, 120_000);
  const readyz = async (p: OutpostProcess) => (await fetch(`${p.url}/readyz?verbose`)).text();
  const metric = async (p: OutpostProcess, outcome: string) => {
    const text = await (await fetch(`${p.url}/metrics`)).text();
    return Number(
      new RegExp(`^outpost_metabase_recoveries_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(text)?.[1],
    );
  };
  const recoveredEvents = async (p: OutpostProcess) => {
    const res = await fetch(`${p.url}/api/v1/namespaces/default/events`);
    const items = ((await res.json()) as { items: { reason: string; type: string; message: string }[] })
      .items;
    return items.filter((e) => e.reason === 'MetabaseRecovered');
  };

  /** The DMI socket of a dead agent cannot be copied (and is made again). */
  const noSockets = (src: string) => !src.endsWith('.sock');
  const original = join(dir, 'original');
  const checkpointed = join(dir, 'checkpointed');
  let containers: Awaited<ReturnType<typeof running>>;

  test('a real metabase: two pods run, a snapshot is taken beside the agent, kill -9 adopts', async () => {
    let first = await start(original, '1s');
    containers = await running(first);
    assert.ok(containers, 'both pods run');
    // The schedule (every second here, the first after one second) writes verified snapshots.
    const scheduled = await waitFor(async () => {
      const text = await (await fetch(`${first.url}/metrics`)).text();
      return Number(/^outpost_metabase_snapshots_total\{result="ok"\} (\d+)/m.exec(text)?.[1]) >= 2;
    }, 60_000);
    assert.ok(scheduled, 'two scheduled snapshots');
    const files = readdirSync(join(original, 'snapshots')).filter((f) => f.endsWith('-scheduled.db'));
    assert.ok(files.length >= 1 && files.length <= 2, `--snapshot-keep 2: ${files.join(' ')}`);
    const snap = outpost('snapshot', '--data-dir', original);
    assert.is(snap.status, 0, snap.stderr);
    assert.match(snap.stdout, /-manual\.db\t.*\tverified/);
    await first.kill9();
    first = await start(original);
    await first.ready(120_000);
    assert.equal(await running(first), containers, 'the plain kill -9 adopts');
    await first.kill9();
    // The WAL holds the latest commits: fold them into the file so that damage to the file is seen.
    cpSync(original, checkpointed, { recursive: true, filter: noSockets });
    const db = new Database(join(checkpointed, 'outpost.db'));
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
  });

  /** A copy of `from` without its lock, as the case's data directory. */
  const copy = (from: string, name: string, withSnapshots: boolean) => {
    const to = join(dir, name);
    cpSync(from, to, { recursive: true, filter: noSockets });
    rmSync(join(to, 'outpost.lock'), { force: true });
    if (!withSnapshots) rmSync(join(to, 'snapshots'), { recursive: true, force: true });
    return to;
  };
  const kept = (dataDir: string) =>
    readdirSync(dataDir).filter((f) => /^outpost\.db\.corrupt-\d{8}T\d{9}Z$/.test(f));

  test('a garbage page: moved aside, the snapshot restored, pods adopted, said once everywhere', async () => {
    const data = copy(checkpointed, 'garbage', true);
    garbagePage(join(data, 'outpost.db'));
    const p = await start(data);
    await p.ready(120_000);
    assert.equal(await running(p), containers, 'same containers, restart counts unchanged');
    assert.is(kept(data).length, 1, 'the damaged file is kept');
    const body = await readyz(p);
    assert.match(
      body,
      /\[\+\]metabase ok \(recovered from a damaged file .*restored the snapshot .*-(manual|scheduled)\.db/,
    );
    assert.match(body, 'not recovered: changes after the snapshot');
    assert.is(await metric(p, 'snapshot'), 1);
    assert.is(await metric(p, 'rebuilt'), 0);
    const events = await recoveredEvents(p);
    assert.is(events.length, 1);
    assert.is(events[0]!.type, 'Warning');
    const errors = p
      .logs()
      .split('\n')
      .filter((l) => l.includes('"level":"error"') && l.includes('the metabase file was damaged'));
    assert.is(errors.length, 1, p.logs());
    await p.kill9();
    const doctor = outpost('doctor', '--data-dir', data);
    assert.is(doctor.status, 0, doctor.stdout + doctor.stderr);
    assert.match(doctor.stdout, 'integrity_check ok');
    assert.match(doctor.stdout, 'kept for inspection');
  });

  test('truncated, no snapshot: rebuilt from the manifests and the runtime, what is lost is named', async () => {
    const data = copy(checkpointed, 'truncated', false);
    truncatePages(join(data, 'outpost.db'));
    const p = await start(data);
    await p.ready(120_000);
    assert.equal(await running(p), containers, 'the static pods find their containers again');
    assert.is(kept(data).length, 1);
    const body = await readyz(p);
    assert.match(body, 'no snapshot, rebuilt from the manifests, the cloud and the runtime');
    assert.match(body, 'objects created or changed through the API');
    assert.is(await metric(p, 'rebuilt'), 1);
    assert.is((await recoveredEvents(p)).length, 1);
    await p.kill9();
    assert.is(outpost('doctor', '--data-dir', data).status, 0);
  });

  test('the write-ahead log lost: back as of the last checkpoint (or recovered), pods adopted', async () => {
    const data = copy(original, 'lost-wal', true);
    loseWal(join(data, 'outpost.db'));
    const p = await start(data);
    await p.ready(120_000);
    assert.equal(await running(p), containers);
    // Whether SQLite could tell is the file's business; either way the agent runs on a sound file.
    assert.ok(kept(data).length <= 1);
    if (kept(data).length === 1) assert.match(await readyz(p), 'recovered from a damaged file');
    await p.kill9();
    const doctor = outpost('doctor', '--data-dir', data);
    assert.is(doctor.status, 0, doctor.stdout);
    assert.ok(existsSync(join(data, 'outpost.db')));
  });

  test.after(async () => {
    for (const p of started) await p.kill9();
    // This suite's pods go with it (the lab is shared).
    await removeSandboxes(cri, ns);
    cri.close();
    rmSync(dir, { recursive: true, force: true });
    await lab.stop();
  });
}
test.run();
