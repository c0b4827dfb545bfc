// A stopping agent is not held by a pod being deleted, on a real containerd with Outpost as
// production runs it (the bundle, a child process): a pod with a 60 s grace period whose container
// ignores SIGTERM is deleted, the agent gets SIGTERM while it waits in StopContainer and exits
// without the supervisor abandoning the pods module (`module ignored abort`, after 10 s); the pod
// stays marked deleting in the metabase, and the next start finishes the deletion.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import type { Event } from '#lib/store/events.ts';
import { endLabSuite, labOrSkip, waitFor } from '../helpers/lab.ts';
import {
  ensureBundle,
  type OutpostProcess,
  spawnOutpost,
  termCancellingPass,
} from '../helpers/outpost-process.ts';

const lab = await labOrSkip('test/e2e/stop-while-deleting.test.ts');
if (lab) {
  ensureBundle();
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-stop-deleting-'));
  const dataDir = join(dir, 'data');
  const ns = `sd-${Math.random().toString(36).slice(2, 7)}`;
  const cri = new CriClient({ endpoint: lab.endpoint });
  const started: OutpostProcess[] = [];
  const start = async () => {
    const p = await spawnOutpost({ dataDir, runtimeEndpoint: lab.endpoint, nodeName: 'sd-node' });
    started.push(p);
    return p;
  };
  const pods = (p: OutpostProcess) => `${p.url}/api/v1/namespaces/${ns}/pods`;
  const getPod = async (p: OutpostProcess): Promise<Pod | undefined> => {
    const res = await fetch(`${pods(p)}/stubborn`);
    return res.status === 404 ? undefined : ((await res.json()) as Pod);
  };
  const inRuntime = async () => {
    const labelSelector = { 'io.kubernetes.pod.namespace': ns };
    const [sandboxes, containers] = await Promise.all([
      cri.listPodSandbox({ labelSelector }),
      cri.listContainers({ labelSelector }),
    ]);
    return sandboxes.length + containers.length;
  };

  test('SIGTERM while a pod waits out its grace period: the agent exits, the next start removes the pod', async () => {
    const first = await start();
    await first.ready();
    const created = await first.post(`/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'stubborn' },
      spec: {
        terminationGracePeriodSeconds: 60,
        containers: [
          {
            name: 'main',
            image: lab.images.app,
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', 'trap "" TERM; while true; do sleep 1; done'],
          },
        ],
      },
    });
    assert.is(created.status, 201, await created.clone().text());
    const running = await waitFor(async () => {
      const pod = await getPod(first);
      return pod?.status?.containerStatuses?.[0]?.state?.running ? pod : undefined;
    }, 120_000);
    assert.ok(running, `the pod runs: ${JSON.stringify(await getPod(first))}\n${first.logs()}`);

    const deleted = await fetch(`${pods(first)}/stubborn`, { method: 'DELETE', headers: first.admin });
    assert.ok(deleted.ok, String(deleted.status));
    // The Killing event is recorded as the termination pass calls StopContainer.
    const killing = await waitFor(async () => {
      const res = await fetch(`${first.url}/api/v1/namespaces/${ns}/events`);
      const events = ((await res.json()) as { items: Event[] }).items;
      return events.some((e) => e.reason === 'Killing' && e.involvedObject.name === 'stubborn');
    }, 120_000);
    assert.ok(killing, `no Killing event\n${first.logs()}`);

    await termCancellingPass(first);
    // Still in the metabase, still marked deleting, for the next start.
    const db = new Database(join(dataDir, 'outpost.db'), { readonly: true });
    try {
      const row = db
        .prepare('SELECT object FROM pods WHERE namespace = ? AND name = ?')
        .get(ns, 'stubborn') as { object: string } | undefined;
      assert.ok(row, 'the pod is still in the metabase');
      assert.ok((JSON.parse(row.object) as Pod).metadata.deletionTimestamp, 'still marked deleting');
    } finally {
      db.close();
    }

    const second = await start();
    // Up to the whole grace period again if the container still runs: generous deadlines.
    const gone = await waitFor(async () => (await getPod(second)) === undefined, 240_000, 500);
    assert.ok(gone, `the pod is still served: ${JSON.stringify(await getPod(second))}\n${second.logs()}`);
    assert.ok(await waitFor(async () => (await inRuntime()) === 0, 120_000, 500), 'gone from the runtime');
    assert.not.match(second.logs(), /pod sync failed/);
  });

  test.after(async () => {
    const agent = { stop: async () => void (await Promise.all(started.map((p) => p.kill9()))) };
    await endLabSuite({ agent, cri, ns, dir, lab });
  });
}

test.run();
