// The official JS client, @kubernetes/client-node 1.x, against Outpost on a real containerd (the
// lab): pods and ConfigMaps through its typed APIs with its default patch type (JSON patch) and the
// other two it offers, a watch with its Watch class, logs, exec through its Exec class (WebSocket),
// and a device read and patched through CustomObjectsApi (JSON patch, its default).
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import {
  CoreV1Api,
  CustomObjectsApi,
  Exec,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Status,
  Watch,
} from '@kubernetes/client-node';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import { startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { endLabSuite, labOrSkip, waitFor } from '../helpers/lab.ts';

const lab = await labOrSkip('test/e2e/client-node.test.ts');
if (lab) {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-client-node-'));
  for (const f of ['thermometer.yaml', 'thermometer-model.yaml'])
    copyFileSync(join(import.meta.dirname, '../../examples/manifests', f), join(dir, f));
  const agent: TestAgent = await startTestAgent({ manifests: dir, runtimeEndpoint: lab.endpoint });
  const cri = new CriClient({ endpoint: lab.endpoint });
  const ns = `jsclient-${Math.random().toString(36).slice(2, 7)}`;

  // The data directory's admin kubeconfig: https with its CA, and the admin token.
  const kc = new KubeConfig();
  kc.loadFromFile(agent.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const pod = (name: string, cmd: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels: { app: 'jsclient' } },
    spec: {
      restartPolicy: 'Always',
      containers: [
        { name: 'main', image: lab.images.app, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', cmd] },
      ],
    },
  });
  const code = (e: unknown) => (e as { code?: number }).code;

  test('ConfigMaps: create, get, list, patch (JSON, merge, strategic merge), delete', async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'settings', labels: { app: 'jsclient' } }, data: { a: '1' } },
    });
    assert.is(created.metadata?.name, 'settings');
    assert.ok(created.metadata?.resourceVersion);
    const got = await core.readNamespacedConfigMap({ name: 'settings', namespace: ns });
    assert.equal(got.data, { a: '1' });
    const list = await core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'app=jsclient' });
    assert.equal(
      list.items.map((c) => c.metadata?.name),
      ['settings'],
    );
    // The default patch type of client-node 1.x is JSON patch.
    const jp = await core.patchNamespacedConfigMap({
      name: 'settings',
      namespace: ns,
      body: [{ op: 'add', path: '/data/b', value: '2' }],
    });
    assert.equal(jp.data, { a: '1', b: '2' });
    const mp = await core.patchNamespacedConfigMap(
      { name: 'settings', namespace: ns, body: { data: { c: '3' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    assert.equal(mp.data, { a: '1', b: '2', c: '3' });
    const sp = await core.patchNamespacedConfigMap(
      { name: 'settings', namespace: ns, body: { data: { a: null } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    assert.equal(sp.data, { b: '2', c: '3' });
    await core.deleteNamespacedConfigMap({ name: 'settings', namespace: ns });
    const gone = await core.readNamespacedConfigMap({ name: 'settings', namespace: ns }).catch(code);
    assert.is(gone, 404);
  });

  test('pods: create, watch ADDED/MODIFIED/DELETED, get, list, patch, logs, exec, delete', async () => {
    const events: { type: string; name: string; label: string | undefined }[] = [];
    let watchErr: unknown;
    const watching = await new Watch(kc).watch(
      `/api/v1/namespaces/${ns}/pods`,
      { fieldSelector: 'metadata.name=talker' },
      (type, obj) => events.push({ type, name: obj.metadata?.name, label: obj.metadata?.labels?.step }),
      (err) => {
        watchErr = err;
      },
    );
    try {
      const created = await core.createNamespacedPod({
        namespace: ns,
        body: pod('talker', 'echo hello from talker; exec sleep 3600'),
      });
      assert.is(created.metadata?.name, 'talker');
      assert.is(created.kind, 'Pod');
      const running = await waitFor(
        async () =>
          (await core.readNamespacedPod({ name: 'talker', namespace: ns })).status?.phase === 'Running',
        120_000,
        500,
      );
      assert.ok(running, 'talker Running within 120 s');
      const list = await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=jsclient' });
      assert.equal(
        list.items.map((p) => p.metadata?.name),
        ['talker'],
      );
      // JSON patch (the default), then merge and strategic merge.
      await core.patchNamespacedPod({
        name: 'talker',
        namespace: ns,
        body: [{ op: 'add', path: '/metadata/labels/step', value: 'json' }],
      });
      await core.patchNamespacedPod(
        { name: 'talker', namespace: ns, body: { metadata: { annotations: { by: 'merge' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      const sp = await core.patchNamespacedPod(
        { name: 'talker', namespace: ns, body: { metadata: { labels: { step: 'strategic' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
      assert.is(sp.metadata?.labels?.step, 'strategic');
      assert.is(sp.metadata?.annotations?.by, 'merge');

      const logs = await waitFor(
        async () => {
          const text = await core.readNamespacedPodLog({ name: 'talker', namespace: ns, container: 'main' });
          return text.includes('hello from talker') ? text : '';
        },
        60_000,
        500,
      );
      assert.match(logs, 'hello from talker');

      // Exec through the WebSocket: stdin in, stdout and stderr out, the exit status.
      let stdout = '';
      let stderr = '';
      const sink = (add: (s: string) => void) =>
        new Writable({
          write(chunk, _enc, cb) {
            add(chunk.toString());
            cb();
          },
        });
      const stdin = new PassThrough();
      const status = await new Promise<V1Status>((resolve, reject) => {
        new Exec(kc)
          .exec(
            ns,
            'talker',
            'main',
            ['sh', '-c', 'read line; echo "got $line"; echo oops >&2; exit 3'],
            sink((s) => {
              stdout += s;
            }),
            sink((s) => {
              stderr += s;
            }),
            stdin,
            false,
            resolve,
          )
          .then(() => stdin.end('ping\n'), reject);
      });
      assert.is(stdout, 'got ping\n');
      assert.is(stderr, 'oops\n');
      assert.is(status.status, 'Failure');
      assert.is(status.reason, 'NonZeroExitCode');
      assert.equal(status.details?.causes, [{ reason: 'ExitCode', message: '3' }]);

      const deleted = await core.deleteNamespacedPod({
        name: 'talker',
        namespace: ns,
        gracePeriodSeconds: 0,
      });
      assert.is(deleted.metadata?.name, 'talker');
      const gone = await waitFor(
        async () => (await core.readNamespacedPod({ name: 'talker', namespace: ns }).catch(code)) === 404,
        120_000,
        500,
      );
      assert.ok(gone, 'talker gone within 120 s');
      const seen = await waitFor(() => events.some((e) => e.type === 'DELETED'), 60_000, 200);
      assert.ok(seen, `a DELETED event; saw ${JSON.stringify(events)}`);
      assert.is(watchErr, undefined);
      // Each kind once at least, in this order; the status reports in between are MODIFIED too.
      const types = events.map((e) => e.type);
      assert.is(types[0], 'ADDED');
      assert.is(types.at(-1), 'DELETED');
      assert.ok(types.slice(1, -1).every((t) => t === 'MODIFIED'));
      assert.ok(events.some((e) => e.type === 'MODIFIED' && e.label === 'strategic'));
      assert.ok(events.every((e) => e.name === 'talker'));
    } finally {
      watching.abort();
    }
  });

  test('a device: get, and patch with JSON patch (CustomObjectsApi default)', async () => {
    const ref = { group: 'devices.kubeedge.io', version: 'v1beta1', namespace: 'default', plural: 'devices' };
    const dev = (await custom.getNamespacedCustomObject({ ...ref, name: 'thermometer' })) as {
      kind: string;
      metadata: { labels: Record<string, string> };
    };
    assert.is(dev.kind, 'Device');
    assert.is(dev.metadata.labels.room, 'lab');
    const patched = (await custom.patchNamespacedCustomObject({
      ...ref,
      name: 'thermometer',
      body: [{ op: 'replace', path: '/metadata/labels/room', value: 'hall' }],
    })) as { metadata: { labels: Record<string, string> } };
    assert.is(patched.metadata.labels.room, 'hall');
    const again = (await custom.getNamespacedCustomObject({ ...ref, name: 'thermometer' })) as {
      metadata: { labels: Record<string, string> };
    };
    assert.is(again.metadata.labels.room, 'hall');
    // A failed JSON patch `test` op is 422, as on the API server.
    const failed = await custom
      .patchNamespacedCustomObject({
        ...ref,
        name: 'thermometer',
        body: [{ op: 'test', path: '/metadata/labels/room', value: 'lab' }],
      })
      .catch(code);
    assert.is(failed, 422);
  });

  test.after(async () => {
    await endLabSuite({ agent, cri, ns, dir, lab });
  });
}
test.run();
