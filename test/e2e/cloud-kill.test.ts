// kill -9 with a full outbox, against the real control plane and containerd: Outpost as production
// runs it (the bundle, a child process) has the link cut at the proxy, its pod's container exits
// and restarts while offline (statuses and events pile up in the outbox), it is killed with
// SIGKILL and started again on the same data directory, still offline; once the link is restored
// the cloud holds the pod's exact latest status and every event recorded offline with its
// original times and count. Every wait polls a condition with a generous deadline.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import type { Event } from '#lib/store/events.ts';
import { cloudLabOrSkip } from '../helpers/cloud.ts';
import { labOrSkip, removeSandboxes, waitFor } from '../helpers/lab.ts';
import { ensureBundle, type OutpostProcess, spawnOutpost } from '../helpers/outpost-process.ts';

const lab = await labOrSkip('test/e2e/cloud-kill.test.ts');
const cloud = lab && (await cloudLabOrSkip('test/e2e/cloud-kill.test.ts'));
if (lab && cloud) {
  ensureBundle();
  const node = `kill-${Math.random().toString(36).slice(2, 7)}`;
  const ns = `cloud-kill-${Math.random().toString(36).slice(2, 7)}`;
  const dir = mkdtempSync(join(tmpdir(), 'outpost-cloud-kill-'));
  const dataDir = join(dir, 'data');
  const kubeconfig = cloud.nodeKubeconfig(node, cloud.proxy.url);
  const started: OutpostProcess[] = [];
  const start = async () => {
    const p = await spawnOutpost({
      dataDir,
      runtimeEndpoint: lab.endpoint,
      nodeName: node,
      args: ['--cloud', kubeconfig, '--kubelet-port', '0'],
    });
    started.push(p);
    return p;
  };
  const metric = async (p: OutpostProcess, name: string): Promise<number | undefined> => {
    const text = await fetch(`${p.url}/metrics`).then(
      (r) => r.text(),
      () => '',
    );
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.slice(name.length + 1));
  };
  const localPod = async (p: OutpostProcess): Promise<Pod | undefined> => {
    const r = await fetch(`${p.url}/api/v1/namespaces/${ns}/pods/flap`);
    return r.ok ? ((await r.json()) as Pod) : undefined;
  };
  const localEvents = async (p: OutpostProcess): Promise<Event[]> => {
    const r = await fetch(
      `${p.url}/api/v1/namespaces/${ns}/events?fieldSelector=${encodeURIComponent('involvedObject.name=flap')}`,
    );
    return ((await r.json()) as { items: Event[] }).items.filter((e) => e.involvedObject.name === 'flap');
  };
  const cloudPod = async (): Promise<Pod | undefined> => {
    const out = await cloud.kubectl(['-n', ns, 'get', 'pod', 'flap', '-o', 'json', '--ignore-not-found']);
    return out.trim() ? (JSON.parse(out) as Pod) : undefined;
  };
  const cloudEvents = async (): Promise<Event[]> =>
    (
      JSON.parse(
        await cloud.kubectl([
          '-n',
          ns,
          'get',
          'events',
          '--field-selector',
          'involvedObject.name=flap',
          '-o',
          'json',
        ]),
      ) as { items: Event[] }
    ).items;
  const steady = (pod: Pod | undefined, restarts: number) => {
    const c = pod?.status?.containerStatuses?.[0];
    return c?.restartCount === restarts && c.ready === true && c.state?.running !== undefined;
  };

  test.before(async () => {
    await cloud.createNamespace(ns);
  });
  test.after(async () => {
    for (const p of started) await p.kill9();
    // The pod's containers outlive the killed agent: remove them from the shared runtime.
    const cri = new CriClient({ endpoint: lab.endpoint });
    try {
      await removeSandboxes(cri, ns);
    } finally {
      cri.close();
    }
    await cloud.stop();
    await lab.stop(); // its lease, else the containerd lab outlives the run
    rmSync(dir, { recursive: true, force: true });
  });

  test('kill -9 while the outbox holds entries: the cloud ends with the latest status and every offline event', async () => {
    let agent = await start();
    assert.ok(
      await waitFor(async () => (await metric(agent, 'outpost_cloud_link_online')) === 1, 60_000, 250),
    );
    // Runs until the test drops `go` into its emptyDir, then fails twice (restarts, BackOff) and
    // runs for good with restartCount 2. Tolerates the outage whatever its length.
    await cloud.kubectl(
      ['apply', '-f', '-'],
      `
apiVersion: v1
kind: Pod
metadata: {name: flap, namespace: ${ns}}
spec:
  nodeName: ${node}
  terminationGracePeriodSeconds: 1
  tolerations:
    - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute}
    - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute}
  volumes: [{name: work, emptyDir: {}}]
  containers:
    - name: main
      image: ${lab.images.app}
      imagePullPolicy: IfNotPresent
      volumeMounts: [{name: work, mountPath: /work}]
      command: ["sh", "-c", "while [ ! -f /work/go ]; do sleep 0.2; done; n=$(cat /work/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > /work/n; [ $n -le 2 ] && exit 1; exec sleep 3600"]
`,
    );
    assert.ok(
      await waitFor(async () => steady(await cloudPod(), 0), 120_000, 500),
      'never Running in the cloud',
    );
    const uid = (await cloudPod())!.metadata.uid!;

    cloud.proxy.cut();
    assert.ok(
      await waitFor(async () => (await metric(agent, 'outpost_cloud_link_online')) === 0, 60_000, 250),
    );
    writeFileSync(join(dataDir, 'pods', uid, 'volumes', 'kubernetes.io~empty-dir', 'work', 'go'), '');
    assert.ok(
      await waitFor(async () => steady(await localPod(agent), 2), 180_000, 500),
      `no second restart: ${JSON.stringify((await localPod(agent))?.status?.containerStatuses)}`,
    );
    const offline = await localEvents(agent);
    assert.ok(
      offline.some((e) => e.reason === 'BackOff'),
      `events: ${offline.map((e) => e.reason)}`,
    );
    assert.ok(((await metric(agent, 'outpost_cloud_outbox_depth')) ?? 0) > 0, 'nothing queued offline');

    await agent.kill9();
    agent = await start();
    // Still offline: what was queued survived the kill.
    assert.ok(
      await waitFor(async () => ((await metric(agent, 'outpost_cloud_outbox_depth')) ?? 0) > 0, 60_000, 250),
      'the outbox was lost',
    );
    assert.is.not(await metric(agent, 'outpost_cloud_link_online'), 1);
    assert.ok(await waitFor(async () => steady(await localPod(agent), 2), 120_000, 500), 'not adopted');

    cloud.proxy.restore();
    assert.ok(
      await waitFor(async () => (await metric(agent, 'outpost_cloud_outbox_depth')) === 0, 120_000, 500),
      'outbox not drained',
    );
    // The cloud converges on the node's latest status (polled: the last patch may still be in flight).
    const conditions = (s: Pod['status'], types: string[]) =>
      Object.fromEntries(
        (s?.conditions ?? []).filter((c) => types.includes(c.type)).map((c) => [c.type, c.status]),
      );
    const same = async () => {
      const [l, r] = [(await localPod(agent))?.status, (await cloudPod())?.status];
      const types = (l?.conditions ?? []).map((c) => c.type);
      return (
        isDeepStrictEqual(l?.containerStatuses, r?.containerStatuses) &&
        l?.phase === r?.phase &&
        isDeepStrictEqual(conditions(l, types), conditions(r, types))
      );
    };
    assert.ok(
      await waitFor(same, 120_000, 500),
      `the cloud status differs from the node:\n${JSON.stringify((await cloudPod())?.status)}\n${JSON.stringify((await localPod(agent))?.status)}`,
    );
    const remote = (await cloudPod())!.status!;
    assert.is(remote.containerStatuses?.[0]?.restartCount, 2);
    assert.equal(remote.containerStatuses, (await localPod(agent))!.status!.containerStatuses);

    // Every event the node holds is in the cloud with its count and times, those made offline too.
    const missing = async () => {
      const remoteEvents = await cloudEvents();
      return (await localEvents(agent)).filter((e) => {
        const c = remoteEvents.find((x) => x.metadata.name === e.metadata.name);
        return !(
          c &&
          c.count === e.count &&
          c.firstTimestamp === e.firstTimestamp &&
          c.lastTimestamp === e.lastTimestamp &&
          c.involvedObject.uid === uid
        );
      });
    };
    const all = await waitFor(async () => (await missing()).length === 0, 60_000, 500);
    assert.ok(all, `not in the cloud as recorded: ${JSON.stringify(await missing())}`);
    for (const e of offline) {
      const c = (await cloudEvents()).find((x) => x.metadata.name === e.metadata.name);
      assert.ok(c, `offline event ${e.reason} missing`);
      assert.is(c.firstTimestamp, e.firstTimestamp);
      assert.ok((c.count ?? 0) >= (e.count ?? 0), `${e.reason} count`);
    }
    const startedEvent = (await cloudEvents()).find((e) => e.reason === 'Started');
    assert.is(startedEvent?.count, 3, 'three starts, one event with count 3');
  });
}

test.run();
