// A stopping agent is not held by a JSON exec with stdin, on a real containerd with Outpost as
// production runs it (the bundle, a child process): the streaming session such an exec opens is
// closed on SIGTERM, the request answers 503 saying the agent is stopping, and the agent exits 0
// instead of waiting for the command (here ten minutes) until its HTTP server's close gives up.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import { endLabSuite, labOrSkip, waitFor } from '../helpers/lab.ts';
import { ensureBundle, type OutpostProcess, spawnOutpost } from '../helpers/outpost-process.ts';

const lab = await labOrSkip('test/e2e/stop-while-exec.test.ts');
if (lab) {
  ensureBundle();
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-stop-exec-'));
  const ns = `se-${Math.random().toString(36).slice(2, 7)}`;
  const cri = new CriClient({ endpoint: lab.endpoint });
  const started: OutpostProcess[] = [];

  test('SIGTERM during a JSON exec with stdin: the exec answers 503, the agent exits 0', async () => {
    const agent = await spawnOutpost({
      dataDir: join(dir, 'data'),
      runtimeEndpoint: lab.endpoint,
      nodeName: 'se-node',
    });
    started.push(agent);
    await agent.ready();
    const created = await agent.post(`/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'shell' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'main',
            image: lab.images.app,
            imagePullPolicy: 'IfNotPresent',
            command: ['sleep', '3600'],
          },
        ],
      },
    });
    assert.is(created.status, 201, await created.clone().text());
    const containerId = await waitFor(async () => {
      const res = await fetch(`${agent.url}/api/v1/namespaces/${ns}/pods/shell`);
      const s = ((await res.json()) as Pod).status?.containerStatuses?.[0];
      return s?.state?.running ? s.containerID?.replace(/^\w+:\/\//, '') : undefined;
    }, 120_000);
    assert.ok(containerId, `the pod runs\n${agent.logs()}`);

    // With stdin the exec goes through the runtime's streaming session, not ExecSync.
    const answer = agent
      .post(`/pods/${ns}/shell/exec`, {
        command: ['sh', '-c', 'touch /tmp/exec-started; cat > /dev/null; sleep 600'],
        stdin: 'input\n',
      })
      .then(async (res) => ({ status: res.status, body: (await res.json()) as { message?: string } }))
      .catch((e: unknown) => e as Error);
    const running = await waitFor(
      async () => (await cri.execSync(containerId, ['test', '-e', '/tmp/exec-started'], 10)).exitCode === 0,
      60_000,
      200,
    );
    assert.ok(running, `the exec's command started\n${agent.logs()}`);

    const code = await agent.term();
    assert.is(code, 0, agent.logs());
    const r = await answer;
    assert.ok(!(r instanceof Error), `the exec got an answer: ${String(r)}`);
    assert.is(r.status, 503, JSON.stringify(r.body));
    assert.match(r.body.message ?? '', /exec stream of .* was cancelled: the agent is stopping/);
  });

  test.after(async () => {
    const agent = { stop: async () => void (await Promise.all(started.map((p) => p.kill9()))) };
    await endLabSuite({ agent, cri, ns, dir, lab });
  });
}

test.run();
