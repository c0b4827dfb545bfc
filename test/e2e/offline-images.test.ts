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
    execFileSync('ctr', ['--address', lab.socket, '-n', 'k8s.io', ...args], { encoding: 'utf8' });
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
  const imageId = (await cri.imageStatus(offline))?.id ?? '';

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

  test.after(async () => {
    await strict.stop();
    await agent.stop();
    await removeSandboxes(cri, ns);
    await removeSandboxes(cri, strictNs);
    cri.close();
    try {
      ctr('images', 'rm', offline);
    } catch {}
    rmSync(dir, { recursive: true, force: true });
    rmSync(strictDir, { recursive: true, force: true });
    await lab.stop();
  });
}
test.run();
