// The offline image policy on a real containerd (the lab): a `:latest` pod whose registry cannot
// be reached starts from the image the node has, with a PullFallback event; --image-pull=strict
// keeps kubelet's ErrImagePull; an image neither pullable nor present fails with the cause.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import { kubectl, outpost, startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { labOrSkip, removeSandboxes, waitFor } from '../helpers/lab.ts';

const lab = await labOrSkip('test/e2e/offline-images.test.ts');
if (lab) {
  const suffix = Math.random().toString(36).slice(2, 7);
  const ns = `offline-${suffix}`;
  const strictNs = `strict-${suffix}`;
  // Port 1 on loopback: nothing listens, the pull fails with "connection refused" at once.
  const offline = `127.0.0.1:1/outpost-offline-${suffix}/busybox:latest`;
  const absent = `127.0.0.1:1/outpost-absent-${suffix}/busybox:latest`;
  const ctr = (...args: string[]) =>
    execFileSync('ctr', ['--address', lab.socket, '-n', 'k8s.io', ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  ctr('images', 'tag', lab.images.app, offline);
  const cri = new CriClient({ endpoint: lab.endpoint });
  const pod = (namespace: string, name: string, image: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\nspec:\n` +
    `  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${image}\n` +
    `      command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]\n`;
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-offline-'));
  const strictDir = mkdtempSync(join(tmpdir(), 'outpost-e2e-strict-'));
  writeFileSync(
    join(dir, 'pods.yaml'),
    [pod(ns, 'ticker', offline), pod(ns, 'nowhere', absent)].join('---\n'),
  );
  writeFileSync(join(strictDir, 'pods.yaml'), pod(strictNs, 'ticker', offline));
  const agent: TestAgent = await startTestAgent({ manifests: dir, runtimeEndpoint: lab.endpoint });
  const strict: TestAgent = await startTestAgent({
    manifests: strictDir,
    runtimeEndpoint: lab.endpoint,
    flags: { imagePull: 'strict' },
  });
  const main = (p: Pod | undefined) => p?.status?.containerStatuses?.[0];
  // containerd's CRI plugin learns of images ctr makes or removes from events, a moment later.
  const imageId = (await waitFor(() => cri.imageStatus(offline), 60_000))?.id ?? '';

  test('a :latest pod whose registry is unreachable starts from the local image', async () => {
    assert.ok(imageId.startsWith('sha256:'), imageId);
    const running = await waitFor(() => main(agent.store.pods.get(ns, 'ticker'))?.state?.running, 120_000);
    assert.ok(running, JSON.stringify(agent.store.pods.get(ns, 'ticker')?.status));
    assert.is(agent.store.pods.get(ns, 'ticker')?.spec?.containers[0]?.imagePullPolicy, 'Always');
  });

  test('the PullFallback event names the cached digest, in kubectl get events and outpost describe', async () => {
    const events = await kubectl(agent.url, [
      'get',
      'events',
      '-n',
      ns,
      '--field-selector',
      'involvedObject.name=ticker',
    ]);
    assert.is(events.code, 0, events.stderr);
    const line = events.stdout.split('\n').find((l) => l.includes('PullFallback'));
    assert.ok(line, events.stdout);
    assert.match(line, /Warning/);
    assert.ok(line.includes(imageId), line);
    assert.match(line, /connection refused/);
    const described = await outpost(['describe', 'pod', 'ticker', '-n', ns, '-s', agent.url]);
    assert.is(described.code, 0, described.stderr);
    assert.match(described.stdout, /Warning\s+PullFallback\s+.*using the cached image sha256:/);
  });

  test('with --image-pull=strict the same pod waits with ErrImagePull or ImagePullBackOff', async () => {
    const waiting = await waitFor(() => {
      const reason = main(strict.store.pods.get(strictNs, 'ticker'))?.state?.waiting?.reason;
      return reason === 'ErrImagePull' || reason === 'ImagePullBackOff' ? reason : undefined;
    }, 120_000);
    assert.ok(waiting, JSON.stringify(strict.store.pods.get(strictNs, 'ticker')?.status));
    const failed = strict.store.events
      .list({ involvedName: 'ticker', involvedNamespace: strictNs })
      .items.filter((e) => e.reason === 'Failed' || e.reason === 'PullFallback');
    assert.ok(failed.some((e) => e.reason === 'Failed' && /connection refused/.test(e.message ?? '')));
    assert.not.ok(failed.some((e) => e.reason === 'PullFallback'));
    assert.is(main(strict.store.pods.get(strictNs, 'ticker'))?.state?.running, undefined);
  });

  test('an image neither reachable nor present fails with the cause', async () => {
    const waiting = await waitFor(() => {
      const w = main(agent.store.pods.get(ns, 'nowhere'))?.state?.waiting;
      return w?.reason === 'ErrImagePull' || w?.reason === 'ImagePullBackOff' ? w : undefined;
    }, 120_000);
    assert.ok(waiting, JSON.stringify(agent.store.pods.get(ns, 'nowhere')?.status));
    const failed = agent.store.events
      .list({ involvedName: 'nowhere', involvedNamespace: ns })
      .items.find((e) => e.reason === 'Failed');
    assert.match(failed?.message ?? '', /Failed to pull image ".*": .*connection refused/);
  });

  const loaded = `outpost.local/loaded-${suffix}:v1`;
  const archive = join(dir, 'loaded.tar');

  test('outpost images lists the runtime images with the pods using them, -o json too', async () => {
    const r = await outpost(['images', '-s', agent.url]);
    assert.is(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    assert.match(lines[0] ?? '', /^REPOSITORY\s+TAG\s+IMAGE ID\s+SIZE\s+PINNED\s+USED-BY$/);
    const row = lines.find((l) => l.startsWith(`127.0.0.1:1/outpost-offline-${suffix}/busybox `));
    assert.ok(row, r.stdout);
    assert.match(
      row,
      new RegExp(`\\slatest\\s+${imageId.slice(7, 20)}\\s+\\S+B\\s+(true|false)\\s+\\S*${ns}/ticker`),
    );
    const json = await outpost(['images', '-o', 'json', '-s', agent.url]);
    assert.is(json.code, 0, json.stderr);
    const items = (JSON.parse(json.stdout) as { items: { id: string; usedBy: string[]; pinned: boolean }[] })
      .items;
    const item = items.find((i) => i.id === imageId);
    assert.ok(item?.usedBy.includes(`${ns}/ticker`), json.stdout);
    assert.type(item?.pinned, 'boolean');
  });

  test('outpost images load imports a ctr export archive, and a pod runs from it', async () => {
    ctr('images', 'tag', lab.images.app, loaded);
    ctr('images', 'export', archive, loaded);
    ctr('images', 'rm', loaded);
    assert.ok(await waitFor(async () => (await cri.imageStatus(loaded)) === null, 60_000));
    const r = await outpost(['images', 'load', archive, '-s', agent.url]);
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout, `Loaded image: ${loaded}\n`);
    assert.ok(await waitFor(() => cri.imageStatus(loaded), 60_000));
    writeFileSync(join(dir, 'loaded.yaml'), pod(ns, 'loaded', loaded));
    const running = await waitFor(() => main(agent.store.pods.get(ns, 'loaded'))?.state?.running, 120_000);
    assert.ok(running, JSON.stringify(agent.store.pods.get(ns, 'loaded')?.status));
  });

  test('outpost images load: a missing file and a file that is not an archive are 400s', async () => {
    const missing = await outpost(['images', 'load', join(dir, 'nope.tar'), '-s', agent.url]);
    assert.is(missing.code, 1);
    assert.match(
      missing.stderr,
      /Error from server \(BadRequest\): image archive ".*nope\.tar" not found on the node/,
    );
    writeFileSync(join(dir, 'notes.tar'), 'not a tar at all\n');
    const bad = await outpost(['images', 'load', join(dir, 'notes.tar'), '-s', agent.url]);
    assert.is(bad.code, 1);
    assert.match(bad.stderr, /Error from server \(BadRequest\): ".*notes\.tar" is not an image archive/);
  });

  test.after(async () => {
    await strict.stop();
    await agent.stop();
    await removeSandboxes(cri, ns);
    await removeSandboxes(cri, strictNs);
    cri.close();
    for (const image of [offline, loaded]) {
      try {
        ctr('images', 'rm', image);
      } catch {}
    }
    rmSync(dir, { recursive: true, force: true });
    rmSync(strictDir, { recursive: true, force: true });
    await lab.stop();
  });
}
test.run();
