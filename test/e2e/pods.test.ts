// The lifecycle manager on a real containerd (the lab), seen through the real kubectl.
import { mkdtempSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import { nodeIP } from '#lib/pods/runtime/node-ip.ts';
import { kubectl, startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { endLabSuite, labOrSkip, waitFor } from '../helpers/lab.ts';

const lab = await labOrSkip('test/e2e/pods.test.ts');
if (lab) {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-pods-'));
  const ns = `e2e-${Math.random().toString(36).slice(2, 7)}`;
  // Any port would do (each pod has its network namespace); a random one as before.
  const httpPort = 20000 + Math.floor(Math.random() * 20000);
  const cri = new CriClient({ endpoint: lab.endpoint });
  const image = lab.images.app;
  const pod = (name: string, spec: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec:\n${spec}`;
  const main = (cmd: string, extra = '') =>
    `    - name: main\n      image: ${image}\n      imagePullPolicy: IfNotPresent\n      command: ["sh", "-c", ${JSON.stringify(cmd)}]\n${extra}`;
  writeFileSync(
    join(dir, 'pods.yaml'),
    [
      pod('web', `  containers:\n${main('exec sleep 3600')}`),
      pod('crasher', `  restartPolicy: OnFailure\n  containers:\n${main('echo crashing; exit 1')}`),
      pod(
        'served',
        `  containers:\n${main(`mkdir -p /www && echo ok > /www/index.html && exec httpd -f -p ${httpPort} -h /www`, `      readinessProbe:\n        httpGet: {path: /index.html, port: ${httpPort}}\n        periodSeconds: 1\n`)}`,
      ),
      pod(
        'unstartable',
        `  containers:\n    - {name: main, image: ${image}, imagePullPolicy: IfNotPresent, command: ["/no/such/binary"]}\n`,
      ),
      pod(
        'unlive',
        `  containers:\n${main('exec sleep 3600', '      livenessProbe:\n        exec: {command: ["false"]}\n        periodSeconds: 1\n        failureThreshold: 1\n')}`,
      ),
      pod(
        'unready',
        `  containers:\n${main('exec sleep 3600', '      readinessProbe:\n        exec: {command: ["false"]}\n        periodSeconds: 1\n')}`,
      ),
      pod(
        'ordered',
        `  volumes:\n    - name: work\n      emptyDir: {}\n  initContainers:\n` +
          `    - {name: first, image: ${image}, imagePullPolicy: IfNotPresent, command: ["sh", "-c", "echo one >> /work/order"], volumeMounts: [{name: work, mountPath: /work}]}\n` +
          `    - {name: second, image: ${image}, imagePullPolicy: IfNotPresent, command: ["sh", "-c", "echo two >> /work/order"], volumeMounts: [{name: work, mountPath: /work}]}\n` +
          `  containers:\n${main('exec sleep 3600', '      volumeMounts: [{name: work, mountPath: /work}]\n')}`,
      ),
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${ns}\ndata:\n  greeting: hello from the metabase\n`,
      pod(
        'configured',
        `  volumes:\n    - name: cfg\n      configMap: {name: settings}\n  containers:\n${main('exec sleep 3600', '      volumeMounts: [{name: cfg, mountPath: /etc/cfg}]\n      env:\n        - name: MY_POD\n          valueFrom: {fieldRef: {fieldPath: metadata.name}}\n')}`,
      ),
    ].join('\n---\n'),
  );
  writeFileSync(
    join(dir, 'doomed.yaml'),
    pod('doomed', `  terminationGracePeriodSeconds: 2\n  containers:\n${main('exec sleep 3600')}`),
  );

  const agent: TestAgent = await startTestAgent({
    manifests: dir,
    runtimeEndpoint: lab.endpoint,
    nodeName: 'e2e-node',
  });
  const get = (name: string) => agent.store.pods.get(ns, name);
  const containerId = (p: Pod | undefined, i = 0) =>
    p?.status?.containerStatuses?.[i]?.containerID?.replace('containerd://', '');

  test('kubectl get pods -o wide shows real READY, STATUS, RESTARTS and IP', async () => {
    await waitFor(() => get('web')?.status?.containerStatuses?.[0]?.ready, 90_000);
    // Its own network namespace: an IP of the lab's pod network, not the node's.
    const podIP = get('web')?.status?.podIP ?? '';
    assert.ok(podIP && podIP !== nodeIP(), podIP);
    const r = await kubectl(agent.url, ['get', 'pods', '-n', ns, 'web', '-o', 'wide']);
    assert.is(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(`web\\s+1/1\\s+Running\\s+0\\s+\\S+\\s+${podIP.replaceAll('.', '\\.')}\\s+e2e-node`),
    );
    const running = await cri.listContainers({
      labelSelector: { 'io.kubernetes.pod.name': 'web', 'io.kubernetes.pod.namespace': ns },
    });
    assert.is(running.length, 1, 'one container reached the runtime');
    assert.is(running[0]!.labels['io.kubernetes.container.name'], 'main');
  });

  test('a container exiting 1 under OnFailure restarts with backoff: CrashLoopBackOff', async () => {
    const p = await waitFor(
      () =>
        get('crasher')?.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff' &&
        get('crasher'),
      90_000,
    );
    assert.ok(p, JSON.stringify(get('crasher')?.status?.containerStatuses));
    const s = p.status!.containerStatuses![0]!;
    assert.ok(s.restartCount >= 1);
    assert.is(s.lastState?.terminated?.exitCode, 1);
    const r = await kubectl(agent.url, ['get', 'pod', 'crasher', '-n', ns]);
    assert.match(r.stdout, /crasher\s+0\/1\s+CrashLoopBackOff\s+\d+ \(\S+ ago\)/);
    const events = agent.store.events
      .list({ involvedName: 'crasher', involvedNamespace: ns })
      .items.map((e) => e.reason);
    assert.ok(events.includes('BackOff'), events.join(','));
  });

  test('a container that cannot start (StartError) backs off too: CrashLoopBackOff', async () => {
    const p = await waitFor(
      () =>
        get('unstartable')?.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff' &&
        get('unstartable'),
      90_000,
    );
    assert.ok(p, JSON.stringify(get('unstartable')?.status?.containerStatuses));
    assert.is(p.status!.containerStatuses![0]!.lastState?.terminated?.reason, 'StartError');
  });

  test('a failing liveness exec probe restarts the container', async () => {
    const p = await waitFor(
      () => (get('unlive')?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 && get('unlive'),
      90_000,
    );
    assert.ok(p, JSON.stringify(get('unlive')?.status?.containerStatuses));
    const reasons = agent.store.events
      .list({ involvedName: 'unlive', involvedNamespace: ns })
      .items.map((e) => `${e.reason}: ${e.message}`);
    assert.ok(
      reasons.some((r) => r.startsWith('Unhealthy: Liveness probe failed')),
      reasons.join('\n'),
    );
    assert.ok(
      reasons.some((r) => r.startsWith('Killing:')),
      reasons.join('\n'),
    );
  });

  test('an httpGet readiness probe against the pod IP makes the pod Ready', async () => {
    const p = await waitFor(
      () => get('served')?.status?.containerStatuses?.[0]?.ready && get('served'),
      90_000,
    );
    assert.ok(p, JSON.stringify(get('served')?.status));
    assert.is(p.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  });

  test('a failing readiness probe keeps the pod running but not Ready', async () => {
    await waitFor(() => get('unready')?.status?.phase === 'Running', 90_000);
    await new Promise((r) => setTimeout(r, 2500));
    const p = get('unready')!;
    assert.is(p.status?.phase, 'Running');
    assert.is(p.status?.containerStatuses?.[0]?.ready, false);
    assert.is(p.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
    const r = await kubectl(agent.url, ['get', 'pod', 'unready', '-n', ns]);
    assert.match(r.stdout, /unready\s+0\/1\s+Running\s+0/);
  });

  test('init containers run in order before the main container', async () => {
    const p = await waitFor(() => get('ordered')?.status?.phase === 'Running' && get('ordered'), 90_000);
    assert.ok(p);
    assert.is(
      p.status?.initContainerStatuses?.map((s) => s.state?.terminated?.reason).join(','),
      'Completed,Completed',
    );
    const out = await cri.execSync(containerId(p)!, ['cat', '/work/order'], 30);
    assert.is(out.stdout.toString(), 'one\ntwo\n');
  });

  test('a configMap volume and a fieldRef env var are visible inside the container', async () => {
    const p = await waitFor(
      () => get('configured')?.status?.phase === 'Running' && get('configured'),
      90_000,
    );
    assert.ok(p);
    const file = await cri.execSync(containerId(p)!, ['cat', '/etc/cfg/greeting'], 30);
    assert.is(file.stdout.toString(), 'hello from the metabase');
    const env = await cri.execSync(containerId(p)!, ['sh', '-c', 'echo $MY_POD'], 30);
    assert.is(env.stdout.toString(), 'configured\n');
  });

  test('removing a manifest stops the pod within its grace period and removes it', async () => {
    await waitFor(() => get('doomed')?.status?.phase === 'Running', 90_000);
    unlinkSync(join(dir, 'doomed.yaml'));
    // The grace period is shown by the Killing event below; the deadline only bounds a loaded machine.
    const gone = await waitFor(() => !get('doomed'), 90_000);
    assert.ok(gone, 'the pod left the metabase');
    const left = await cri.listPodSandbox({
      labelSelector: { 'io.kubernetes.pod.name': 'doomed', 'io.kubernetes.pod.namespace': ns },
    });
    assert.is(left.length, 0, 'its sandbox is removed');
    const killing = agent.store.events
      .list({ involvedName: 'doomed', involvedNamespace: ns })
      .items.find((e) => e.reason === 'Killing');
    assert.is(killing?.message, 'Stopping container main');
  });

  test.after(async () => {
    await endLabSuite({ agent, cri, ns, dir, lab });
  });
}
test.run();
