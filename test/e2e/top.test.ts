// `kubectl top pod` (with --containers) and `kubectl top node` against the real containerd (the
// lab): metrics.k8s.io from CRI container stats and the host. Polls until metrics appear.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import { kubectl, run, startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { endLabSuite, labOrSkip, waitFor } from '../helpers/lab.ts';

const lab = await labOrSkip('test/e2e/top.test.ts');
if (lab) {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-top-'));
  const ns = `top-${Math.random().toString(36).slice(2, 7)}`;
  const cri = new CriClient({ endpoint: lab.endpoint });
  const image = lab.images.app;
  const container = (name: string) =>
    `    - name: ${name}\n      image: ${image}\n      imagePullPolicy: IfNotPresent\n      command: ["sh", "-c", "exec sleep 3600"]\n`;
  writeFileSync(
    join(dir, 'pod.yaml'),
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: busy\n  namespace: ${ns}\nspec:\n  containers:\n${container('main')}${container('helper')}`,
  );
  const agent: TestAgent = await startTestAgent({ runtimeEndpoint: lab.endpoint, nodeName: 'top-node' });
  const ok = (r: { code: number | null; stdout: string; stderr: string }) => r.code === 0 && r.stdout;

  test('a pod created with kubectl apply runs both containers', async () => {
    const r = await kubectl(agent.url, ['apply', '-f', join(dir, 'pod.yaml')]);
    assert.is(r.code, 0, r.stderr);
    const running = await waitFor(
      () => agent.store.pods.get(ns, 'busy')?.status?.containerStatuses?.filter((s) => s.ready).length === 2,
      120_000,
      500,
    );
    assert.ok(running, JSON.stringify(agent.store.pods.get(ns, 'busy')?.status));
  });

  test('kubectl top pod and top pod --containers show CRI usage', async () => {
    const pod = await waitFor(
      async () => ok(await kubectl(agent.url, ['top', 'pod', 'busy', '-n', ns])),
      120_000,
      1000,
    );
    assert.ok(pod, 'kubectl top pod answered');
    assert.match(pod, /NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
    assert.match(pod, /busy\s+\d+m\s+\d+Mi/);
    const containers = await waitFor(
      async () => ok(await kubectl(agent.url, ['top', 'pod', 'busy', '-n', ns, '--containers'])),
      120_000,
      1000,
    );
    assert.ok(containers, 'kubectl top pod --containers answered');
    assert.match(containers, /POD\s+NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
    assert.match(containers, /busy\s+main\s+\d+m\s+\d+Mi/);
    assert.match(containers, /busy\s+helper\s+\d+m\s+\d+Mi/);
  });

  test('kubectl top node shows the host with percentages of allocatable', async () => {
    const node = await waitFor(async () => ok(await kubectl(agent.url, ['top', 'node'])), 120_000, 1000);
    assert.ok(node, 'kubectl top node answered');
    assert.match(node, /NAME\s+CPU\(cores\)\s+CPU(\(%\)|%)\s+MEMORY\(bytes\)\s+MEMORY(\(%\)|%)/);
    assert.match(node, /top-node\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%/);
  });

  // Every kubectl minor the dispatcher offers (1.27-1.33), where installed.
  const sdk = '/usr/lib/google-cloud-sdk/bin';
  for (const minor of [27, 28, 29, 30, 31, 32, 33]) {
    const bin = join(sdk, `kubectl.1.${minor}`);
    if (!existsSync(bin)) continue;
    test(`kubectl 1.${minor}: top pod --containers and top node`, async () => {
      const home = mkdtempSync(join(dir, `home-${minor}-`));
      const k = async (args: string[]) =>
        ok(
          await run(bin, [`--server=${agent.url}`, `--cache-dir=${join(home, 'cache')}`, ...args], {
            env: { ...process.env, HOME: home, KUBECONFIG: join(home, 'none') },
          }),
        );
      const pod = await waitFor(() => k(['top', 'pod', '-n', ns, '--containers']), 120_000, 1000);
      assert.match(pod || '', /busy\s+main\s+\d+m\s+\d+Mi/);
      const node = await waitFor(() => k(['top', 'node']), 120_000, 1000);
      assert.match(node || '', /top-node\s+\d+m\s+\d+%/);
    });
  }

  test.after(async () => {
    await kubectl(agent.url, ['delete', 'pod', 'busy', '-n', ns, '--grace-period=0']).catch(() => undefined);
    await endLabSuite({ agent, cri, ns, dir, lab });
  });
}
test.run();
