// Pods from a real cluster (kube-apiserver 1.20.2 from the cloud lab) on a real containerd: a pod
// bound to the node runs and shows Running in the cloud with its kube-api-access volume; a
// ConfigMap change reaches the mounted volume; with the link cut at a proxy, status changes and
// events made offline reach the cloud after reconnect (the exact latest status, every event with
// its count and first time); pods deleted in the cloud while the node was offline are stopped
// after reconnect. Every wait polls a condition with a generous deadline.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import { POD_NAME, POD_NAMESPACE } from '#lib/pods/runtime/labels.ts';
import type { Event } from '#lib/store/events.ts';
import { startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { cloudLabOrSkip } from '../helpers/cloud.ts';
import { labOrSkip, removeSandboxes, waitFor } from '../helpers/lab.ts';

const lab = await labOrSkip('test/e2e/cloud-pods.test.ts');
const cloud = lab && (await cloudLabOrSkip('test/e2e/cloud-pods.test.ts'));
if (lab && cloud) {
  const node = `pods-${Math.random().toString(36).slice(2, 7)}`;
  const ns = 'cloud-pods';
  let agent: TestAgent;
  const kubectl = cloud.kubectl;
  const cloudPod = async (name: string): Promise<Pod | undefined> => {
    const out = await kubectl(['-n', ns, 'get', 'pod', name, '-o', 'json', '--ignore-not-found']);
    return out.trim() ? (JSON.parse(out) as Pod) : undefined;
  };
  const cloudEvents = async (name: string): Promise<Event[]> =>
    (
      JSON.parse(
        await kubectl([
          '-n',
          ns,
          'get',
          'events',
          '--field-selector',
          `involvedObject.name=${name}`,
          '-o',
          'json',
        ]),
      ) as { items: Event[] }
    ).items;
  const apply = (yaml: string) => kubectl(['apply', '-f', '-'], yaml);
  const podYaml = (name: string, cmd: string, extra = '', volumes = '') => `
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${ns}}
spec:
  nodeName: ${node}
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ${lab.images.app}
      imagePullPolicy: IfNotPresent
      command: ["sh", "-c", ${JSON.stringify(cmd)}]
${extra}${volumes}`;
  const running = (name: string) =>
    waitFor(
      async () => {
        const p = await cloudPod(name);
        return p?.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.ready === true;
      },
      120_000,
      500,
    );

  test.before(async () => {
    await cloud.createNamespace(ns);
    agent = await startTestAgent({
      nodeName: node,
      runtimeEndpoint: lab.endpoint,
      flags: { cloud: cloud.nodeKubeconfig(node, cloud.proxy.url) },
    });
    assert.ok(await waitFor(() => agent.cloud?.link.online, 60_000), 'the link never came up');
  });
  test.after(async () => {
    await agent?.stop();
    // The pods outlive the agent: remove them from the shared runtime.
    const cri = new CriClient({ endpoint: lab.endpoint });
    await removeSandboxes(cri, ns).finally(() => cri.close());
    await cloud.stop();
    await lab.stop(); // its lease, else the containerd lab outlives the run
  });

  test('a pod bound to the node runs and is Running in the cloud, with its kube-api-access volume', async () => {
    await apply(
      podYaml(
        'web',
        'cat /var/run/secrets/kubernetes.io/serviceaccount/namespace; echo; test -s /var/run/secrets/kubernetes.io/serviceaccount/token && test -s /var/run/secrets/kubernetes.io/serviceaccount/ca.crt && echo token-ok; exec sleep 3600',
      ),
    );
    assert.ok(
      await running('web'),
      `not Running in the cloud: ${JSON.stringify((await cloudPod('web'))?.status)}`,
    );
    const logs = await waitFor(
      async () => {
        const r = await fetch(`${agent.url}/api/v1/namespaces/${ns}/pods/web/log`, { headers: agent.admin });
        const t = r.ok ? await r.text() : '';
        return t.includes('token-ok') ? t : '';
      },
      60_000,
      500,
    );
    assert.match(logs, `${ns}\ntoken-ok`);
    const events = await cloudEvents('web');
    const reasons = events.map((e) => e.reason);
    assert.ok(reasons.includes('Started'), `events: ${reasons.join(', ')}`);
    const started = events.find((e) => e.reason === 'Started')!;
    assert.is(started.source.host, node);
    assert.is(started.involvedObject.uid, (await cloudPod('web'))!.metadata.uid);
  });

  test('a ConfigMap change reaches the mounted volume of the running pod', async () => {
    await apply(
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-config, namespace: ${ns}}\ndata: {level: debug}\n`,
    );
    await apply(
      podYaml(
        'configured',
        'exec sleep 3600',
        '      volumeMounts: [{name: cfg, mountPath: /cfg}]\n',
        '  volumes: [{name: cfg, configMap: {name: app-config}}]\n',
      ),
    );
    assert.ok(await running('configured'));
    const uid = (await cloudPod('configured'))!.metadata.uid!;
    const file = join(agent.dataDir, 'pods', uid, 'volumes', 'kubernetes.io~configmap', 'cfg', 'level');
    const read = () => (existsSync(file) ? readFileSync(file, 'utf8') : '');
    assert.is(await waitFor(() => read() === 'debug', 60_000, 250), true);
    await kubectl(['-n', ns, 'patch', 'configmap', 'app-config', '-p', '{"data":{"level":"info"}}']);
    assert.is(await waitFor(() => read() === 'info', 60_000, 250), true, `still ${read()}`);
  });

  test('cut mid-watch: status and events made offline reach the cloud after reconnect, exactly', async () => {
    assert.ok(await running('web'));
    cloud.proxy.cut();
    assert.ok(await waitFor(() => agent.cloud?.link.state === 'offline', 60_000, 100));
    const uid = agent.store.pods.record(ns, 'web')!.uid;
    // Two restarts through the local API while offline: statuses and events pile up in the outbox.
    for (let i = 1; i <= 2; i++) {
      const r = await fetch(`${agent.url}/api/v1/namespaces/${ns}/pods/web/restart`, {
        method: 'POST',
        headers: agent.admin,
      });
      assert.is(r.status, 200, await r.text());
      assert.ok(
        await waitFor(
          () => {
            const s = agent.store.pods.get(ns, 'web')?.status;
            return s?.containerStatuses?.[0]?.restartCount === i && s.containerStatuses[0].ready;
          },
          60_000,
          200,
        ),
        `restart ${i} not done`,
      );
    }
    // Repeats of one event aggregate (count), as kubelet's correlator does.
    for (let i = 0; i < 3; i++)
      agent.store.events.record(
        { kind: 'Pod', namespace: ns, name: 'web', uid },
        'Warning',
        'Offline',
        'said offline',
      );
    assert.ok(agent.store.outbox.depth() > 0, 'nothing queued while offline');
    cloud.proxy.restore();
    assert.ok(await waitFor(() => agent.store.outbox.depth() === 0, 120_000, 200), 'outbox not drained');
    const local = agent.store.pods.get(ns, 'web')!.status!;
    const remote = (await cloudPod('web'))!.status!;
    assert.is(remote.containerStatuses?.[0]?.restartCount, 2);
    assert.equal(remote.containerStatuses, local.containerStatuses);
    assert.is(remote.phase, local.phase);
    const remoteEvents = await cloudEvents('web');
    for (const e of agent.store.events.list({ involvedNamespace: ns, involvedName: 'web' }).items) {
      const c = remoteEvents.find((x) => x.metadata.name === e.metadata.name);
      assert.ok(c, `event ${e.reason} "${e.message}" missing in the cloud`);
      assert.is(c.count, e.count, `${e.reason} count`);
      assert.is(c.firstTimestamp, e.firstTimestamp, `${e.reason} first time`);
      assert.is(c.lastTimestamp, e.lastTimestamp, `${e.reason} last time`);
    }
    assert.is(remoteEvents.find((x) => x.reason === 'Offline')?.count, 3);
  });

  test('pods deleted in the cloud while offline (gracefully or forced) are stopped after reconnect', async () => {
    await apply(podYaml('doomed', 'exec sleep 3600'));
    await apply(podYaml('forced', 'exec sleep 3600'));
    assert.ok(await running('doomed'));
    assert.ok(await running('forced'));
    cloud.proxy.cut();
    assert.ok(await waitFor(() => agent.cloud?.link.state === 'offline', 60_000, 100));
    await kubectl(['-n', ns, 'delete', 'pod', 'doomed', '--wait=false']);
    await kubectl(['-n', ns, 'delete', 'pod', 'forced', '--grace-period=0', '--force']);
    // Offline: both keep running here.
    assert.ok(agent.store.pods.record(ns, 'doomed'));
    assert.ok(agent.store.pods.record(ns, 'forced'));
    cloud.proxy.restore();
    assert.ok(
      await waitFor(
        () => !agent.store.pods.record(ns, 'doomed') && !agent.store.pods.record(ns, 'forced'),
        120_000,
        200,
      ),
      'not stopped after reconnect',
    );
    // The graceful one was deleted for good by the node, with its uid as precondition.
    assert.ok(await waitFor(async () => !(await cloudPod('doomed')), 60_000, 500), 'still in the cloud');
    const cri = new CriClient({ endpoint: lab.endpoint });
    const left = (await cri.listContainers({ labelSelector: { [POD_NAMESPACE]: ns } })).filter(
      (c) => c.state === 'CONTAINER_RUNNING' && ['doomed', 'forced'].includes(c.labels[POD_NAME] ?? ''),
    );
    cri.close();
    assert.equal(left, []);
  });
  const runningInRuntime = async (names: string[]) => {
    const cri = new CriClient({ endpoint: lab.endpoint });
    try {
      return (await cri.listContainers({ labelSelector: { [POD_NAMESPACE]: ns } })).filter(
        (c) => c.state === 'CONTAINER_RUNNING' && names.includes(c.labels[POD_NAME] ?? ''),
      );
    } finally {
      cri.close();
    }
  };

  test('a Deployment as a cluster admin makes it: kube-scheduler binds its pods to the node and they run', async () => {
    await apply(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: scheduled, namespace: ${ns}}
spec:
  replicas: 2
  selector: {matchLabels: {app: scheduled}}
  template:
    metadata: {labels: {app: scheduled}}
    spec:
      nodeSelector: {kubernetes.io/hostname: ${node}}
      terminationGracePeriodSeconds: 1
      containers:
        - name: main
          image: ${lab.images.app}
          imagePullPolicy: IfNotPresent
          command: ["sh", "-c", "exec sleep 3600"]
`);
    type PodList = { items: Pod[] };
    const scheduled = async () =>
      (JSON.parse(await kubectl(['-n', ns, 'get', 'pods', '-l', 'app=scheduled', '-o', 'json'])) as PodList)
        .items;
    const allRunning = await waitFor(
      async () => {
        const pods = await scheduled();
        return (
          pods.length === 2 &&
          pods.every(
            (p) =>
              !p.metadata.deletionTimestamp &&
              p.status?.phase === 'Running' &&
              p.status.containerStatuses?.[0]?.ready === true,
          )
        );
      },
      180_000,
      1_000,
    );
    const pods = await scheduled();
    assert.ok(allRunning, `not Running: ${JSON.stringify(pods.map((p) => [p.metadata.name, p.status]))}`);
    // Bound by the scheduler (the manifest names no node), with what the cluster adds to every pod.
    for (const p of pods) {
      assert.is(p.spec.nodeName, node);
      const { metadata, spec } = p as unknown as {
        metadata: { ownerReferences?: { kind: string }[] };
        spec: { volumes?: { name: string }[]; tolerations?: { key?: string }[] };
      };
      assert.ok(metadata.ownerReferences?.some((o) => o.kind === 'ReplicaSet'));
      assert.ok(spec.volumes?.some((v) => v.name.startsWith('kube-api-access-')));
      assert.ok(spec.tolerations?.some((t) => t.key === 'node.kubernetes.io/unreachable'));
      const events = await cloudEvents(p.metadata.name!);
      assert.ok(
        events.some((e) => e.reason === 'Scheduled' && e.message.includes(node)),
        `no Scheduled event: ${events.map((e) => e.reason).join(', ')}`,
      );
    }
    const names = pods.map((p) => p.metadata.name!);
    assert.is((await runningInRuntime(names)).length, 2, 'not running on containerd');
    assert.ok(
      await waitFor(
        async () =>
          (await kubectl([
            '-n',
            ns,
            'get',
            'deployment',
            'scheduled',
            '-o',
            'jsonpath={.status.availableReplicas}',
          ])) === '2',
        120_000,
        1_000,
      ),
      'the Deployment never counted 2 available replicas',
    );
    await kubectl(['-n', ns, 'delete', 'deployment', 'scheduled', '--wait=false']);
    assert.ok(
      await waitFor(async () => (await runningInRuntime(names)).length === 0, 120_000, 500),
      'the Deployment deleted, its pods still run',
    );
  });

  test('a pod deleted in the cloud posts its final terminated status before the node deletes it', async () => {
    await apply(
      podYaml('final', 'trap "exit 0" TERM; while true; do sleep 1; done').replace(
        'terminationGracePeriodSeconds: 1',
        'terminationGracePeriodSeconds: 30',
      ),
    );
    assert.ok(await running('final'));
    const uid = (await cloudPod('final'))!.metadata.uid;
    const watch = await cloud.watch(`/api/v1/namespaces/${ns}/pods?fieldSelector=metadata.name=final`);
    try {
      await kubectl(['-n', ns, 'delete', 'pod', 'final', '--wait=false']);
      const deleted = await waitFor(() => watch.events.find((e) => e.type === 'DELETED'), 120_000, 200);
      assert.ok(deleted, `never deleted: ${watch.events.map((e) => e.type).join(', ')}`);
      assert.is(deleted.object.metadata.uid, uid);
      // The deleted object is the pod as it was last written: the node's final status.
      const last = deleted.object.status as NonNullable<Pod['status']>;
      assert.is(last.phase, 'Succeeded', JSON.stringify(last));
      const term = last.containerStatuses?.[0]?.state?.terminated;
      assert.ok(term, `not terminated: ${JSON.stringify(last.containerStatuses)}`);
      assert.is(term.exitCode, 0);
      assert.is(term.reason, 'Completed');
      assert.is(last.containerStatuses?.[0]?.ready, false);
      assert.is(last.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
    } finally {
      watch.stop();
    }
  });

  test('a pod deleted while offline is stopped after the relist a 410 forces (API server restarted)', async () => {
    await apply(podYaml('relisted', 'exec sleep 3600'));
    assert.ok(await running('relisted'));
    cloud.proxy.cut();
    assert.ok(await waitFor(() => agent.cloud?.link.state === 'offline', 60_000, 100));
    await kubectl(['-n', ns, 'delete', 'pod', 'relisted', '--grace-period=0', '--force']);
    // A restarted API server's watch cache begins after the deletion: the node's watch resumes from
    // an older resourceVersion, gets 410 Gone and must list again; only the list can tell it.
    await cloud.stopApiserver();
    await cloud.startApiserver();
    assert.ok(agent.store.pods.record(ns, 'relisted'), 'stopped while offline');
    assert.is((await runningInRuntime(['relisted'])).length, 1);
    cloud.proxy.restore();
    assert.ok(
      await waitFor(() => !agent.store.pods.record(ns, 'relisted'), 120_000, 200),
      'not stopped after the relist',
    );
    assert.ok(
      await waitFor(async () => (await runningInRuntime(['relisted'])).length === 0, 60_000, 500),
      'still running on containerd',
    );
    assert.is(await cloudPod('relisted'), undefined);
  });
}

test.run();
