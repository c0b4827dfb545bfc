// Stopping the pod manager while pods are starting (more pods than its parallelism) on a real
// containerd: the passes in flight end, the queued ones never begin. They used to run to the last
// pod after the stop, which held an agent's shutdown until the supervisor abandoned the pods
// module (10 s; `module ignored abort` with 100 pods starting).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import { systemClock } from '#lib/clock.ts';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import { silentLogger } from '#lib/log.ts';
import { ProbeManager } from '#lib/pods/probes/index.ts';
import { PodManager } from '#lib/pods/worker/manager.ts';
import { createStore } from '#lib/store/index.ts';
import { endLabSuite, labOrSkip, waitFor } from '../helpers/lab.ts';

const PODS = 12;
const PARALLELISM = 2;

const lab = await labOrSkip('test/e2e/pods-stop.test.ts');
if (lab) {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-pods-stop-'));
  const ns = `stop-${Math.random().toString(36).slice(2, 7)}`;
  const node = 'stop-node';
  const cri = new CriClient({ endpoint: lab.endpoint });
  const metabase = openMetabase(dir);
  const store = createStore(metabase, { host: node });
  for (let i = 0; i < PODS; i++) {
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `p${i}`, namespace: ns },
      spec: {
        nodeName: node,
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
    };
    store.pods.put(pod, 'api');
  }
  const sandboxes = async () =>
    (await cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.namespace': ns } })).length;

  test('stop() while pods start: only the passes in flight end, no queued one begins', async () => {
    const manager = new PodManager({
      cri,
      store,
      log: silentLogger,
      clock: systemClock,
      nodeName: node,
      dataDir: dir,
      prober: new ProbeManager({ exec: (id, cmd, timeout) => cri.execSync(id, cmd, timeout) }),
      parallelism: PARALLELISM,
    });
    const started = manager.start().catch((e: unknown) => e);
    assert.ok(await waitFor(async () => (await sandboxes()) > 0, 120_000, 20), 'a first pod starts');
    const seen = await sandboxes();
    await manager.stop();
    await started;
    const after = await sandboxes();
    // Begun before the stop: those already seen, those in flight (the parallelism), and at most
    // the parallelism again for passes that ended in the moment between the listing and stop().
    assert.ok(
      after <= seen + 2 * PARALLELISM,
      `${after} sandboxes of ${PODS} pods (${seen} seen at the stop)`,
    );
    assert.ok(after < PODS, `${after} sandboxes: every queued pod was started after the stop`);
    // Stopped for good: nothing more starts.
    assert.is(await sandboxes(), after);
  });

  test.after(async () => {
    metabase.close();
    await endLabSuite({ agent: { stop: async () => {} }, cri, ns, dir, lab });
  });
}

test.run();
