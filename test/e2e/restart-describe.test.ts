// Restart and describe on a real containerd (the lab), seen through the real kubectl and `outpost`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import { kubectl, outpost, startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { labOrSkip, waitFor } from '../helpers/lab.ts';

const lab = await labOrSkip('test/e2e/restart-describe.test.ts');
if (lab) {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-restart-'));
  const ns = `rd-${Math.random().toString(36).slice(2, 7)}`;
  const cri = new CriClient({ endpoint: lab.endpoint });
  const image = lab.images.app;
  // A shell that ends on SIGTERM, so a stop takes well under the 3 s grace period.
  const serve = `trap 'exit 0' TERM; while true; do sleep 1; done`;
  // Crashes twice (a CrashLoopBackOff history), then runs: the count survives in an emptyDir.
  const flaky = `n=$(cat /data/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > /data/n; [ $n -ge 3 ] || exit 1; ${serve}`;
  const pod = (name: string, cmd: string, extra = '') =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: ${ns}\n  labels: {suite: restart}\nspec:\n${extra}` +
    `  containers:\n    - name: main\n      image: ${image}\n      imagePullPolicy: IfNotPresent\n` +
    `      command: ["sh", "-c", ${JSON.stringify(cmd)}]\n` +
    (cmd === flaky
      ? '      volumeMounts: [{name: data, mountPath: /data}]\n  volumes: [{name: data, emptyDir: {}}]\n'
      : '');
  writeFileSync(
    join(dir, 'pods.yaml'),
    [
      pod('web', serve),
      pod('flaky', flaky),
      pod('once', serve, '  restartPolicy: Never\n'),
      pod('done', 'exit 0', '  restartPolicy: Never\n'),
      pod('cli', serve),
      pod('keadm-a', serve),
      pod('keadm-b', serve),
    ].join('---\n'),
  );
  const missingDir = mkdtempSync(join(tmpdir(), 'outpost-e2e-noruntime-'));
  mkdirSync(join(missingDir, 'manifests'));
  writeFileSync(join(missingDir, 'manifests', 'pod.yaml'), pod('web', serve));
  const missingSocket = `unix://${join(missingDir, 'missing.sock')}`;

  const agent: TestAgent = await startTestAgent({ manifests: dir, runtimeEndpoint: lab.endpoint });
  const down: TestAgent = await startTestAgent({
    manifests: join(missingDir, 'manifests'),
    runtimeEndpoint: missingSocket,
  });

  const get = (name: string) => agent.store.pods.get(ns, name);
  const main = (p: Pod | undefined) => p?.status?.containerStatuses?.[0];
  const runningWith = (name: string, restarts: number) => {
    const s = main(get(name));
    return s?.state?.running && s.restartCount === restarts ? get(name) : undefined;
  };
  const containerId = (p: Pod | undefined) => main(p)?.containerID?.replace('containerd://', '') ?? '';
  const post = (to: Pick<TestAgent, 'url' | 'admin'>, path: string, body?: string) =>
    fetch(`${to.url}${path}`, { method: 'POST', headers: to.admin, ...(body === undefined ? {} : { body }) });
  const events = (name: string, reason: string) =>
    agent.store.events
      .list({ involvedName: name, involvedNamespace: ns })
      .items.filter((e) => e.reason === reason);
  const sandboxes = async (name: string) =>
    (
      await cri.listPodSandbox({
        labelSelector: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': ns },
      })
    ).map((s) => `${s.id}:${s.state}`);
  const restartsColumn = async (name: string, restarts: number) => {
    const r = await kubectl(agent.url, ['get', 'pod', name, '-n', ns]);
    assert.is(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(`\\n${name}\\s+1/1\\s+Running\\s+${restarts} \\(\\S+ ago\\)\\s+\\S+\\n`),
    );
  };
  /** kubectl's and outpost's describe of one pod, ages normalised as in test/cli/describe.test.ts. */
  const normalize = (text: string) => {
    let inEvents = false;
    return text
      .split('\n')
      .map((line) => {
        if (line === 'Events:') inEvents = true;
        else if (!line.startsWith(' ')) inEvents = false;
        return inEvents
          ? line.replace(/\b(\d+[smhdy])+\b|<unknown>|<invalid>/g, 'AGE').replace(/ {2,}/g, '  ')
          : line;
      })
      .join('\n');
  };

  test('POST .../pods/{name}/restart stops the running container, not the sandbox: RESTARTS +1', async () => {
    const before = await waitFor(() => runningWith('web', 0), 60_000);
    assert.ok(before, JSON.stringify(get('web')?.status));
    const sandbox = await sandboxes('web');
    const res = await post(agent, `/api/v1/namespaces/${ns}/pods/web/restart`);
    assert.is(res.status, 200);
    assert.equal(await res.json(), {
      namespace: ns,
      name: 'web',
      uid: before.metadata.uid,
      stopped: [{ container: 'main', id: containerId(before) }],
    });
    const after = await waitFor(() => runningWith('web', 1), 60_000);
    assert.ok(after, JSON.stringify(get('web')?.status));
    await restartsColumn('web', 1);
    assert.equal(await sandboxes('web'), sandbox, 'the same sandbox, still ready');
    assert.is((await cri.containerStatus(containerId(before))).state, 'CONTAINER_EXITED');
    assert.is.not(containerId(after), containerId(before));
    const restarted = events('web', 'Restarted');
    assert.is(restarted.length, 1);
    assert.is(restarted[0]!.message, 'Restart requested: stopped container main');
    assert.is(restarted[0]!.source.component, 'outpost');
    assert.is(restarted[0]!.involvedObject.uid, before.metadata.uid);
  });

  test('a pod with a crash history restarts at once: no CrashLoopBackOff delay', async () => {
    const before = await waitFor(() => runningWith('flaky', 2), 90_000);
    assert.ok(before, JSON.stringify(get('flaky')?.status));
    const backoffs = () => events('flaky', 'BackOff').reduce((n, e) => n + e.count, 0);
    const seen = backoffs();
    assert.ok(seen >= 1, 'the second crash was held back by the back-off');
    const res = await post(agent, `/api/v1/namespaces/${ns}/pods/flaky/restart`);
    assert.is(res.status, 200);
    assert.ok(await waitFor(() => runningWith('flaky', 3), 60_000), JSON.stringify(get('flaky')?.status));
    assert.is(backoffs(), seen, 'no back-off was applied to the requested restart');
    await restartsColumn('flaky', 3);
  });

  test('restartPolicy Never: a requested restart still restarts (alias /pods/{ns}/{name}/restart)', async () => {
    assert.ok(await waitFor(() => runningWith('once', 0), 60_000));
    const res = await post(agent, `/pods/${ns}/once/restart`);
    assert.is(res.status, 200);
    const after = await waitFor(() => runningWith('once', 1), 60_000);
    assert.ok(after, JSON.stringify(get('once')?.status));
    assert.is(after.status?.phase, 'Running');
    await restartsColumn('once', 1);
  });

  test('outpost restart pod prints the stopped container IDs, errors as kubectl does, exit 1', async () => {
    const before = await waitFor(() => runningWith('cli', 0), 60_000);
    assert.ok(before);
    const r = await outpost(['restart', 'pod', 'cli', 'nope', '-n', ns, '-s', agent.url]);
    assert.is(r.stdout, `${containerId(before)}\n`);
    assert.is(r.stderr, 'Error from server (NotFound): pods "nope" not found\n');
    assert.is(r.code, 1);
    assert.ok(await waitFor(() => runningWith('cli', 1), 60_000));
    await restartsColumn('cli', 1);
    const ok = await outpost(['ctl', 'restart', 'pod/cli', '-n', ns, '-s', agent.url]);
    assert.is(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^[0-9a-f]{64}\n$/);
  });

  test('keadm-compatible POST .../pods/restart: RestartResponse, honest status code', async () => {
    const a = await waitFor(() => runningWith('keadm-a', 0), 60_000);
    const b = await waitFor(() => runningWith('keadm-b', 0), 60_000);
    assert.ok(a && b);
    const res = await post(agent, `/api/v1/namespaces/${ns}/pods/restart`, '["keadm-a","keadm-b"]');
    assert.is(res.status, 200);
    assert.equal(await res.json(), { errMessages: [], LogMessages: [containerId(a), containerId(b)] });
    const a1 = await waitFor(() => runningWith('keadm-a', 1), 60_000);
    assert.ok(a1 && (await waitFor(() => runningWith('keadm-b', 1), 60_000)));
    await restartsColumn('keadm-a', 1);
    await restartsColumn('keadm-b', 1);
    assert.ok(await waitFor(() => get('done')?.status?.phase === 'Succeeded', 60_000));
    const mixed = await post(agent, `/api/v1/namespaces/${ns}/pods/restart`, '["keadm-a","nope","done"]');
    assert.is(mixed.status, 409, 'the most severe failure: 409 over 404');
    assert.equal(await mixed.json(), {
      errMessages: [
        'pods "nope" not found',
        'pods "done" cannot be restarted: none of its containers is running',
      ],
      LogMessages: [containerId(a1)],
    });
    const bad = await post(agent, `/api/v1/namespaces/${ns}/pods/restart`, '{"name":"web"}');
    assert.is(bad.status, 422);
    assert.is(((await bad.json()) as { reason: string }).reason, 'Invalid');
  });

  test('unknown pod: 404; nothing running: 409; exact Status bodies', async () => {
    const missing = await post(agent, `/api/v1/namespaces/${ns}/pods/nope/restart`);
    assert.is(missing.status, 404);
    assert.equal(await missing.json(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods "nope" not found',
      reason: 'NotFound',
      details: { name: 'nope', kind: 'pods' },
      code: 404,
    });
    assert.ok(await waitFor(() => get('done')?.status?.phase === 'Succeeded', 60_000));
    const idle = await post(agent, `/api/v1/namespaces/${ns}/pods/done/restart`);
    assert.is(idle.status, 409);
    assert.equal(await idle.json(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods "done" cannot be restarted: none of its containers is running',
      reason: 'Conflict',
      details: { name: 'done', kind: 'pods' },
      code: 409,
    });
  });

  test('runtime down (a missing socket): 503 naming the endpoint, for both endpoints', async () => {
    const res = await post(down, `/api/v1/namespaces/${ns}/pods/web/restart`);
    assert.is(res.status, 503);
    const body = (await res.json()) as { details: { causes: { message: string }[] } };
    const cause = body.details.causes[0]!.message;
    assert.match(cause, 'ENOENT');
    assert.equal(body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `pods "web" cannot be restarted: container runtime at ${missingSocket} is unavailable`,
      reason: 'ServiceUnavailable',
      details: { name: 'web', kind: 'pods', causes: [{ reason: 'RuntimeUnavailable', message: cause }] },
      code: 503,
    });
    const bulk = await post(down, `/api/v1/namespaces/${ns}/pods/restart`, '["web","nope"]');
    assert.is(bulk.status, 503);
    assert.equal(await bulk.json(), {
      errMessages: [
        `pods "web" cannot be restarted: container runtime at ${missingSocket} is unavailable`,
        'pods "nope" not found',
      ],
      LogMessages: [],
    });
    const cli = await outpost(['restart', 'pod', 'web', '-n', ns, '-s', down.url]);
    assert.is(cli.code, 1);
    assert.is(
      cli.stderr,
      `Error from server (ServiceUnavailable): pods "web" cannot be restarted: container runtime at ${missingSocket} is unavailable\n`,
    );
  });

  test("kubectl describe pod shows the events Outpost recorded (outpost's and kubelet's)", async () => {
    const r = await kubectl(agent.url, ['describe', 'pod', 'web', '-n', ns]);
    assert.is(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /\n {2}Normal {2}Restarted {2}\S+ +outpost {2}Restart requested: stopped container main\n/,
    );
    assert.match(
      r.stdout,
      /\n {2}Normal {2}Started +\S+( \(x2 over \S+\))? +kubelet {2}Started container main\n/,
    );
    assert.match(r.stdout, /\n {4}Restart Count: {2}1\n/);
    assert.match(r.stdout, /\n {4}Last State: {5}Terminated\n/);
  });

  for (const name of ['web', 'flaky', 'done', 'once']) {
    test(`outpost describe pod ${name} prints what kubectl describe prints (ages aside)`, async () => {
      const ours = await outpost(['describe', 'pod', name, '-n', ns, '-s', agent.url]);
      const real = await kubectl(agent.url, ['describe', 'pod', name, '-n', ns]);
      assert.is(real.code, 0, real.stderr);
      assert.is(ours.code, 0, ours.stderr);
      assert.is(normalize(ours.stdout), normalize(real.stdout));
    });
  }

  test.after(async () => {
    await down.stop();
    await agent.stop();
    for (const s of await cri.listPodSandbox()) {
      if (s.labels['io.kubernetes.pod.namespace'] === ns) await cri.removePodSandbox(s.id).catch(() => {});
    }
    cri.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(missingDir, { recursive: true, force: true });
    await lab.stop();
  });
}
test.run();
