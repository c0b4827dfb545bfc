// The data directory's filesystem full (a small tmpfs, filled to the last byte) under a running
// agent with a pod on containerd: writes answer 503 naming the directory and its free bytes, never
// a 500; reads go on; DiskPressure shows on the Node, in /readyz?verbose and /metrics; freeing the
// space ends it by itself, writes are accepted again and the metabase is sound. Needs `mount -t
// tmpfs` (CI runs as root); skipped loudly where it is not permitted.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import { labOrSkip, removeSandboxes, waitFor } from '../helpers/lab.ts';
import { ensureBundle, type OutpostProcess, spawnOutpost } from '../helpers/outpost-process.ts';

const FILE = 'test/e2e/full-disk.test.ts';
const lab = await labOrSkip(FILE);
const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-full-'));
const mnt = join(dir, 'mnt');
mkdirSync(mnt);
const mounted = lab
  ? spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', mnt], { encoding: 'utf8' })
  : undefined;
if (!lab || mounted?.status !== 0) {
  if (lab) {
    const why = (mounted?.stderr || mounted?.error?.message || 'failed').trim();
    process.stderr.write(`\n*** SKIPPING ${FILE}: mount -t tmpfs is not permitted here (${why}) ***\n\n`);
    test.skip(`${FILE} (mount -t tmpfs not permitted)`, () => {});
  }
  rmSync(dir, { recursive: true, force: true });
} else {
  const bundle = ensureBundle();
  const ns = `full-${Math.random().toString(36).slice(2, 7)}`;
  const data = join(mnt, 'data');
  const manifests = join(dir, 'manifests');
  mkdirSync(manifests);
  writeFileSync(
    join(manifests, 'pod.yaml'),
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: ${ns}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${lab.images.app}\n      imagePullPolicy: IfNotPresent\n      command: ["sh", "-c", "exec sleep 3600"]\n`,
  );
  const cri = new CriClient({ endpoint: lab.endpoint });
  let agent: OutpostProcess | undefined;
  const filler = join(mnt, 'filler');
  const codes: number[] = [];
  const restart = async () => {
    const res = await fetch(`${agent!.url}/api/v1/namespaces/${ns}/pods/web/restart`, {
      method: 'POST',
      headers: agent!.admin,
    });
    codes.push(res.status);
    return {
      status: res.status,
      body: (await res.json()) as { kind?: string; reason?: string; message?: string },
    };
  };
  const readyz = async () => (await fetch(`${agent!.url}/readyz?verbose`)).text();
  const diskPressure = async () => {
    const node = (await (await fetch(`${agent!.url}/api/v1/nodes/full-node`)).json()) as {
      status: { conditions: { type: string; status: string; message: string }[] };
    };
    return node.status.conditions.find((c) => c.type === 'DiskPressure');
  };
  const gauge = async () =>
    Number(/^outpost_disk_pressure (\d+)/m.exec(await (await fetch(`${agent!.url}/metrics`)).text())?.[1]);
  /** Writes zeros until the filesystem refuses: 1 MiB chunks, then 4 KiB, then single bytes. */
  const fill = () => {
    const fd = openSync(filler, 'w');
    try {
      for (const size of [1 << 20, 4096, 1]) {
        const chunk = Buffer.alloc(size);
        try {
          for (;;) writeSync(fd, chunk);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
        }
      }
    } finally {
      closeSync(fd);
    }
  };

  test('the full data directory: writes answer 503 naming it and its free bytes, reads go on, DiskPressure', async () => {
    agent = await spawnOutpost({
      dataDir: data,
      runtimeEndpoint: lab.endpoint,
      nodeName: 'full-node',
      manifests,
    });
    await agent.ready(120_000);
    const first = await restart();
    assert.is(first.status, 200, JSON.stringify(first.body));
    fill();
    // The next write needs a page the filesystem no longer has (the write-ahead log grows).
    const refused = await waitFor(async () => {
      const r = await restart();
      return r.status === 503 && r;
    }, 60_000);
    assert.ok(refused, `codes seen: ${codes.join(' ')}`);
    assert.is(refused.body.kind, 'Status');
    assert.is(refused.body.reason, 'ServiceUnavailable');
    assert.match(refused.body.message ?? '', `no space left in the data directory ${data} (`);
    assert.match(refused.body.message ?? '', /\(\d+ bytes free\)/);
    // Reads keep working.
    const pods = await fetch(`${agent.url}/api/v1/namespaces/${ns}/pods`);
    assert.is(pods.status, 200);
    assert.equal(
      ((await pods.json()) as { items: Pod[] }).items.map((p) => p.metadata.name),
      ['web'],
    );
    assert.match(await readyz(), /\[-\]disk failed: DiskPressure: metabase writes fail for lack of space/);
    const condition = await diskPressure();
    assert.is(condition?.status, 'True');
    assert.match(condition?.message ?? '', `outpost cannot write its metabase: no space left in ${data}`);
    assert.is(await gauge(), 1);
    // Later writes are refused before they act, with the same Status.
    const again = await restart();
    assert.is(again.status, 503);
    assert.not.ok(codes.includes(500), `never a 500: ${codes.join(' ')}`);
  });

  test('space freed: the pressure ends by itself, writes are accepted, the metabase is sound', async () => {
    rmSync(filler);
    assert.ok(
      await waitFor(async () => (await readyz()).includes('[+]disk ok'), 60_000),
      'DiskPressure ended without a restart',
    );
    assert.is((await diskPressure())?.status, 'False');
    assert.is(await gauge(), 0);
    // The container may be coming back from the refused restarts: retried until one is running.
    const r = await waitFor(async () => {
      const x = await restart();
      return x.status === 200 && x;
    }, 120_000);
    assert.ok(r, `codes seen: ${codes.join(' ')}`);
    const doctor = spawnSync(process.execPath, [bundle, 'doctor', '--data-dir', data], { encoding: 'utf8' });
    assert.is(doctor.status, 0, doctor.stdout);
    assert.match(doctor.stdout, 'integrity_check ok');
    assert.not.ok(codes.includes(500), `never a 500: ${codes.join(' ')}`);
  });

  test.after(async () => {
    await agent?.kill9();
    await removeSandboxes(cri, ns);
    cri.close();
    if (spawnSync('umount', [mnt]).status !== 0) spawnSync('umount', ['-l', mnt]);
    rmSync(dir, { recursive: true, force: true });
    await lab.stop();
  });
}
test.run();
