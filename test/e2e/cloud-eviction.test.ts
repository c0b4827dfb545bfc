// Eviction after an outage, against the real control plane (kube-controller-manager 1.20.2 with a
// shortened --node-monitor-grace-period, taint-based eviction) and containerd: with the link cut
// at the proxy, the node lifecycle controller marks the node unreachable, taints it and evicts the
// pod that tolerates the taint for 5 s; the pod keeps running on the offline node and is stopped
// once the link is back, as kubelet does. A pod tolerating the taint without a limit keeps running
// and is Ready in the cloud again. A second node (no runtime) stays connected: with every node
// unreachable the controller assumes its own outage and evicts nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import { POD_NAME, POD_NAMESPACE } from '#lib/pods/runtime/labels.ts';
import { startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { cloudLabOrSkip } from '../helpers/cloud.ts';
import { labOrSkip, removeSandboxes, waitFor } from '../helpers/lab.ts';

const file = 'test/e2e/cloud-eviction.test.ts';
const lab = await labOrSkip(file);
const cloud =
  lab &&
  (await cloudLabOrSkip(file, {
    // 1.20's defaults are 40 s and 5 s; the Lease is renewed every 10 s.
    controllerManagerFlags: ['--node-monitor-grace-period=30s', '--node-monitor-period=2s'],
  }));
if (lab && cloud) {
  const suffix = Math.random().toString(36).slice(2, 7);
  const node = `evict-${suffix}`;
  const ns = 'cloud-eviction';
  let agent: TestAgent;
  let keeper: TestAgent;
  const kubectl = cloud.kubectl;
  const cloudPod = async (name: string): Promise<Pod | undefined> => {
    const out = await kubectl(['-n', ns, 'get', 'pod', name, '-o', 'json', '--ignore-not-found']);
    return out.trim() ? (JSON.parse(out) as Pod) : undefined;
  };
  const nodeReady = (name: string) =>
    kubectl(['get', 'node', name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']).catch(
      () => '',
    );
  const ready = (p: Pod | undefined) =>
    p?.status?.phase === 'Running' &&
    p.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True' &&
    !p.metadata.deletionTimestamp;
  const runningHere = async (name: string) => {
    const cri = new CriClient({ endpoint: lab.endpoint });
    try {
      return (await cri.listContainers({ labelSelector: { [POD_NAMESPACE]: ns, [POD_NAME]: name } })).filter(
        (c) => c.state === 'CONTAINER_RUNNING',
      );
    } finally {
      cri.close();
    }
  };
  const podYaml = (name: string, tolerationSeconds?: number) => `
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${ns}}
spec:
  nodeName: ${node}
  terminationGracePeriodSeconds: 1
  tolerations:
    - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute${tolerationSeconds === undefined ? '' : `, tolerationSeconds: ${tolerationSeconds}`}}
    - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute${tolerationSeconds === undefined ? '' : `, tolerationSeconds: ${tolerationSeconds}`}}
  containers:
    - name: main
      image: ${lab.images.app}
      imagePullPolicy: IfNotPresent
      command: ["sh", "-c", "exec sleep 3600"]
`;

  test.before(async () => {
    await cloud.createNamespace(ns);
    keeper = await startTestAgent({
      nodeName: `keeper-${suffix}`,
      flags: { cloud: cloud.nodeKubeconfig(`keeper-${suffix}`) },
    });
    agent = await startTestAgent({
      nodeName: node,
      runtimeEndpoint: lab.endpoint,
      flags: { cloud: cloud.nodeKubeconfig(node, cloud.proxy.url) },
    });
    assert.ok(
      await waitFor(async () => (await nodeReady(node)) === 'True', 120_000, 500),
      'node never Ready',
    );
    assert.ok(
      await waitFor(async () => (await nodeReady(`keeper-${suffix}`)) === 'True', 120_000, 500),
      'keeper never Ready',
    );
  });
  test.after(async () => {
    await agent?.stop();
    await keeper?.stop();
    // The pods outlive the agent: remove them from the shared runtime.
    const cri = new CriClient({ endpoint: lab.endpoint });
    await removeSandboxes(cri, ns).finally(() => cri.close());
    await cloud.stop();
    await lab.stop(); // its lease, else the containerd lab outlives the run
  });

  test('evicted after an outage: stopped on reconnect; an unbounded toleration keeps its pod running', async () => {
    await kubectl(['apply', '-f', '-'], `${podYaml('kept')}---${podYaml('evicted', 5)}`);
    assert.ok(
      await waitFor(
        async () => ready(await cloudPod('kept')) && ready(await cloudPod('evicted')),
        120_000,
        500,
      ),
    );
    const [keptBefore] = await runningHere('kept');
    assert.ok(keptBefore, 'kept does not run on containerd');

    cloud.proxy.cut();
    assert.ok(await waitFor(() => agent.cloud?.link.state === 'offline', 60_000, 100));
    // Unknown after the grace period, tainted unreachable, evicted after its 5 s.
    const evicted = await waitFor(
      async () => (await cloudPod('evicted'))?.metadata.deletionTimestamp,
      240_000,
      1_000,
    );
    assert.ok(evicted, `not evicted: ${JSON.stringify(await kubectl(['get', 'node', node, '-o', 'json']))}`);
    const taints = await kubectl(['get', 'node', node, '-o', 'jsonpath={.spec.taints[*].key}']);
    assert.match(taints, 'node.kubernetes.io/unreachable');
    // Offline, the node keeps both running (autonomy); the cloud kept the tolerant one.
    assert.is((await runningHere('evicted')).length, 1);
    assert.ok(agent.store.pods.record(ns, 'evicted'));
    assert.not.ok((await cloudPod('kept'))?.metadata.deletionTimestamp);

    cloud.proxy.restore();
    assert.ok(
      await waitFor(async () => (await runningHere('evicted')).length === 0, 120_000, 500),
      'the evicted pod still runs after reconnect',
    );
    assert.ok(
      await waitFor(async () => (await cloudPod('evicted')) === undefined, 120_000, 500),
      'the evicted pod is still in the cloud',
    );
    // The tolerant pod never stopped, and the cloud shows it Ready again (the controller had
    // marked it not ready while the node was unreachable).
    assert.ok(
      await waitFor(async () => (await nodeReady(node)) === 'True', 120_000, 500),
      'node not Ready again',
    );
    assert.ok(
      await waitFor(async () => ready(await cloudPod('kept')), 120_000, 500),
      `kept not Ready in the cloud: ${JSON.stringify((await cloudPod('kept'))?.status?.conditions)}`,
    );
    const [keptAfter] = await runningHere('kept');
    assert.is(keptAfter?.id, keptBefore.id, 'the tolerant pod was restarted');
  });
}

test.run();
