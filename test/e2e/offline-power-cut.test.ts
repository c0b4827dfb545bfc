// The case: a node whose registry is out of reach loses power; its `:latest` pod (pull
// policy Always) comes back from the image on the node, with a PullFallback event. The suite runs
// its own lab: cutting the power of the shared one would kill other suites' pods.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Pod } from '#lib/kube/types.ts';
import { powerCut, stopLab } from '../../scripts/lab.ts';
import { startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { labOrSkip, waitFor } from '../helpers/lab.ts';

const LAB = {
  dir: process.env.OUTPOST_OFFLINE_LAB ?? resolve(import.meta.dirname, '../../.lab/test-offline'),
  log: () => {},
};
const lab = await labOrSkip('test/e2e/offline-power-cut.test.ts', { ...LAB, keep: true });
if (lab) {
  const ns = `cut-${Math.random().toString(36).slice(2, 7)}`;
  const image = '127.0.0.1:1/outpost-offline/ticker:latest';
  execFileSync(
    'ctr',
    ['--address', lab.socket, '-n', 'k8s.io', 'images', 'tag', '--force', lab.images.app, image],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-offline-cut-'));
  const manifests = join(dir, 'manifests');
  const dataDir = join(dir, 'data');
  mkdirSync(manifests);
  mkdirSync(dataDir);
  writeFileSync(
    join(manifests, 'ticker.yaml'),
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ticker\n  namespace: ${ns}\nspec:\n` +
      `  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${image}\n` +
      `      command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]\n`,
  );
  const start = () => startTestAgent({ manifests, dataDir, runtimeEndpoint: lab.endpoint });
  let agent: TestAgent | undefined = await start();
  const main = (a: TestAgent) =>
    (a.store.pods.get(ns, 'ticker') as Pod | undefined)?.status?.containerStatuses?.[0];

  test('after a power cut with the registry unreachable, the :latest pod comes back from the local image', async () => {
    const first = await waitFor(() => (main(agent!)?.state?.running ? main(agent!) : undefined), 120_000);
    assert.ok(first, JSON.stringify(agent!.store.pods.get(ns, 'ticker')?.status));
    await agent!.stop();
    agent = undefined;
    await powerCut(LAB);
    agent = await start();
    const again = await waitFor(() => {
      const s = main(agent!);
      return s?.state?.running && s.containerID !== first.containerID ? s : undefined;
    }, 120_000);
    assert.ok(again, JSON.stringify(agent.store.pods.get(ns, 'ticker')?.status));
    const fallback = agent.store.events
      .list({ involvedName: 'ticker', involvedNamespace: ns })
      .items.filter((e) => e.reason === 'PullFallback');
    assert.ok(fallback.length > 0);
    assert.match(fallback[0]?.message ?? '', /connection refused.*using the cached image sha256:/);
  });

  test.after(async () => {
    await agent?.stop();
    rmSync(dir, { recursive: true, force: true });
    await stopLab(LAB); // the suite's own lab: its pods and images go with it
  });
}
test.run();
