// A stopping agent is not held by an image pull, on a real containerd with Outpost as production
// runs it (the bundle, a child process): a pod's image comes from a registry on loopback that
// takes the connection and answers nothing (the lab has no internet; test/helpers/registry.ts),
// the agent gets SIGTERM while PullImage waits and exits without the supervisor abandoning the
// pods module (`module ignored abort`, after 10 s); the runtime cancels the pull (the registry
// sees the request dropped), the metabase shows no failed pull (no ErrImagePull or
// ImagePullBackOff, no Failed event), and the next start, with the registry answering, pulls the
// image and runs the pod.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import { endLabSuite, labOrSkip, waitFor } from '../helpers/lab.ts';
import {
  ensureBundle,
  type OutpostProcess,
  spawnOutpost,
  termCancellingPass,
} from '../helpers/outpost-process.ts';
import { startRegistry, type TestRegistry } from '../helpers/registry.ts';

const lab = await labOrSkip('test/e2e/stop-while-pulling.test.ts');
if (lab) {
  ensureBundle();
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-stop-pulling-'));
  const dataDir = join(dir, 'data');
  const suffix = Math.random().toString(36).slice(2, 7);
  const ns = `sp-${suffix}`;
  const cri = new CriClient({ endpoint: lab.endpoint });
  const ctr = (...args: string[]) =>
    execFileSync('ctr', ['--address', lab.socket, '-n', 'k8s.io', ...args], { encoding: 'utf8' });
  const registry: TestRegistry = await startRegistry(lab.socket, lab.images.app);
  // Not `latest`: pull policy IfNotPresent, so each start pulls only while the runtime lacks it.
  const image = `${registry.host}/outpost-slow-${suffix}/busybox:1`;
  const started: OutpostProcess[] = [];
  const start = async () => {
    const p = await spawnOutpost({ dataDir, runtimeEndpoint: lab.endpoint, nodeName: 'sp-node' });
    started.push(p);
    return p;
  };
  const getPod = async (p: OutpostProcess): Promise<Pod | undefined> => {
    const res = await fetch(`${p.url}/api/v1/namespaces/${ns}/pods/slow`);
    return res.status === 404 ? undefined : ((await res.json()) as Pod);
  };

  test('SIGTERM while a pod pulls its image: the agent exits, the pull is not a failure, the next start pulls and runs the pod', async () => {
    const first = await start();
    await first.ready();
    const created = await first.post(`/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'slow' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'main',
            image,
            command: ['sh', '-c', "trap 'exit 0' TERM; while true; do sleep 1; done"],
          },
        ],
      },
    });
    assert.is(created.status, 201, await created.clone().text());
    // The runtime's pull reached the registry, which holds it.
    assert.ok(
      await waitFor(() => registry.held() > 0, 120_000),
      `no pull reached the registry\n${first.logs()}`,
    );

    await termCancellingPass(first);
    // containerd cancelled its fetch with the call: the registry saw the request dropped.
    assert.ok(await waitFor(() => registry.abandoned() > 0, 60_000), 'the held request was not dropped');
    assert.is(await cri.imageStatus(image), null);

    // No failed pull in the metabase: no waiting reason from it, no Failed event, no back-off.
    const db = new Database(join(dataDir, 'outpost.db'), { readonly: true });
    try {
      const status = db
        .prepare('SELECT patch FROM pod_status WHERE namespace = ? AND name = ?')
        .get(ns, 'slow') as { patch: string } | undefined;
      assert.not.match(status?.patch ?? '', /ErrImagePull|ImagePullBackOff/);
      const events = db
        .prepare('SELECT reason, type FROM events WHERE involved_namespace = ? AND involved_name = ?')
        .all(ns, 'slow') as { reason: string; type: string }[];
      assert.ok(
        events.some((e) => e.reason === 'Pulling'),
        JSON.stringify(events),
      );
      assert.not.ok(
        events.some((e) => e.type === 'Warning' || e.reason === 'BackOff'),
        JSON.stringify(events),
      );
    } finally {
      db.close();
    }

    registry.release();
    const asked = registry.requests();
    const second = await start();
    const running = await waitFor(
      async () => (await getPod(second))?.status?.containerStatuses?.[0]?.state?.running,
      180_000,
      500,
    );
    assert.ok(running, `the pod runs: ${JSON.stringify(await getPod(second))}\n${second.logs()}`);
    assert.ok(registry.requests() > asked, 'the next start pulled from the registry');
    assert.ok(await cri.imageStatus(image), 'the image is in the runtime');
    assert.not.match(second.logs(), /pod sync failed/);
  });

  test.after(async () => {
    const agent = {
      stop: async () => {
        await Promise.all(started.map((p) => p.kill9()));
        await registry.close();
        // The pulled image (its tag and digest names), so that no later run finds it present.
        const names = ctr('images', 'ls', '-q')
          .split('\n')
          .filter((n) => n.startsWith(`${registry.host}/`));
        if (names.length) ctr('images', 'rm', ...names);
      },
    };
    await endLabSuite({ agent, cri, ns, dir, lab });
  });
}

test.run();
