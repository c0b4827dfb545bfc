// The pod worker's recovery paths against a fake runtime that names containers the way containerd
// does (name_pod_namespace_uid_attempt, reserved until removed): what reaches the runtime.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import { systemClock } from '#lib/clock.ts';
import type { CriClient } from '#lib/cri/client.ts';
import type * as T from '#lib/cri/types.ts';
import type { Pod } from '#lib/kube/types.ts';
import { silentLogger } from '#lib/log.ts';
import type { RuntimePod } from '#lib/pods/runtime/view.ts';
import { ImagePuller } from '#lib/pods/worker/images.ts';
import { PodWorker, SANDBOX_CREATIONS } from '#lib/pods/worker/pod-worker.ts';
import { WriteBatch } from '#lib/pods/worker/write-batch.ts';
import { createStore } from '#lib/store/index.ts';

const POD_UID = 'io.kubernetes.pod.uid';

/** Just enough of containerd's CRI for one pod: names are reserved while their object exists. */
class FakeRuntime {
  sandboxes: T.PodSandbox[] = [];
  containers: (T.Container & { name: string })[] = [];
  calls: string[] = [];
  /** Names an unfinished create holds, with the ID it will have. */
  inFlight = new Map<string, string>();
  #n = 0;
  #id = () => `${(++this.#n).toString(16).padStart(8, '0')}`;
  #now = () => String(BigInt(Date.now()) * 1_000_000n + BigInt(this.#n));

  async listPodSandbox(f?: T.PodSandboxFilter) {
    this.calls.push('ListPodSandbox');
    return this.sandboxes.filter((s) => !f?.labelSelector || s.labels[POD_UID] === f.labelSelector[POD_UID]);
  }
  async listContainers(f?: T.ContainerFilter) {
    this.calls.push('ListContainers');
    return this.containers.filter((c) => !f?.labelSelector || c.labels[POD_UID] === f.labelSelector[POD_UID]);
  }
  async runPodSandbox(config: T.PodSandboxConfig) {
    this.calls.push('RunPodSandbox');
    const m = config.metadata;
    const s: T.PodSandbox = {
      id: this.#id(),
      metadata: { name: m.name, uid: m.uid, namespace: m.namespace, attempt: m.attempt ?? 0 },
      state: 'SANDBOX_READY',
      createdAt: this.#now(),
      labels: config.labels ?? {},
      annotations: config.annotations ?? {},
      runtimeHandler: '',
    };
    this.sandboxes.push(s);
    if (config.linux?.securityContext?.namespaceOptions?.network === 'POD')
      this.ips.set(s.id, `10.88.0.${this.sandboxes.length + 1}`);
    return s.id;
  }
  async createContainer(podId: string, config: T.ContainerConfig, sandbox: T.PodSandboxConfig) {
    this.calls.push('CreateContainer');
    const m = sandbox.metadata;
    const name = `${config.metadata.name}_${m.name}_${m.namespace}_${m.uid}_${config.metadata.attempt ?? 0}`;
    const holder = this.inFlight.get(name) ?? this.containers.find((c) => c.name === name)?.id;
    if (holder)
      throw new Error(
        `CreateContainer: failed to reserve container name "${name}": name "${name}" is reserved for "${holder}"`,
      );
    const c = {
      id: this.#id(),
      name,
      podSandboxId: podId,
      metadata: { name: config.metadata.name, attempt: config.metadata.attempt ?? 0 },
      image: null,
      imageRef: 'sha256:1',
      state: 'CONTAINER_CREATED' as T.ContainerState,
      createdAt: this.#now(),
      labels: config.labels ?? {},
      annotations: config.annotations ?? {},
    };
    this.containers.push(c);
    return c.id;
  }
  /** The unfinished create of `name` is done: its container appears, created. */
  finish(name: string, template: T.Container & { name: string }) {
    const id = this.inFlight.get(name)!;
    this.inFlight.delete(name);
    this.containers.push({ ...template, id, name, state: 'CONTAINER_CREATED', createdAt: this.#now() });
  }
  async startContainer(id: string) {
    this.calls.push(`StartContainer ${id}`);
    this.containers.find((c) => c.id === id)!.state = 'CONTAINER_RUNNING';
  }
  /** The IP the runtime's CNI setup gave each pod-network sandbox. */
  ips = new Map<string, string>();
  async podSandboxStatus(id: string) {
    this.calls.push('PodSandboxStatus');
    const s = this.sandboxes.find((x) => x.id === id)!;
    return { ...s, network: { ip: this.ips.get(id) ?? '', additionalIps: [] }, linux: null };
  }
  async removePodSandbox(id: string) {
    this.calls.push('RemovePodSandbox');
    this.sandboxes = this.sandboxes.filter((s) => s.id !== id);
  }
  async stopContainer(id: string) {
    this.calls.push('StopContainer');
    this.containers.find((c) => c.id === id)!.state = 'CONTAINER_EXITED';
  }
  async stopPodSandbox(id: string) {
    this.calls.push('StopPodSandbox');
    this.sandboxes.find((s) => s.id === id)!.state = 'SANDBOX_NOTREADY';
  }
  async containerStatus(id: string): Promise<T.ContainerStatus> {
    this.calls.push('ContainerStatus');
    const c = this.containers.find((x) => x.id === id)!;
    const running = c.state !== 'CONTAINER_CREATED';
    return {
      ...c,
      startedAt: running ? c.createdAt : '0',
      finishedAt: c.state === 'CONTAINER_EXITED' ? c.createdAt : '0',
      exitCode: c.state === 'CONTAINER_EXITED' ? 255 : 0,
      reason: c.state === 'CONTAINER_EXITED' ? 'Unknown' : '',
      message: '',
      mounts: [],
      logPath: '',
    };
  }
  async imageStatus(image: string) {
    this.calls.push('ImageStatus');
    return { id: 'sha256:1', repoTags: [image] } as unknown as T.Image;
  }
}

function setup(o: { hostNetwork?: boolean } = { hostNetwork: true }) {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-worker-'));
  const mb = openMetabase(dir);
  const store = createStore(mb, { host: 'n1' });
  const rt = new FakeRuntime();
  const cri = rt as unknown as CriClient;
  const wakes: number[] = [];
  const writes = new WriteBatch(mb.sqlite, (e) => {
    throw e;
  });
  const worker = new PodWorker({
    cri,
    store,
    log: silentLogger,
    clock: systemClock,
    images: new ImagePuller(cri, Date.now),
    prober: { ready: () => true, started: () => true, sync: () => {}, stopPod: () => {} },
    nodeName: 'n1',
    hostIP: '10.0.0.1',
    dataDir: dir,
    managedBy: 'test',
    wakeAt: (_uid, at) => wakes.push(at - Date.now()),
    writes,
  });
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      nodeName: 'n1',
      ...(o.hostNetwork ? { hostNetwork: true } : {}),
      containers: [{ name: 'main', image: 'busybox:1', imagePullPolicy: 'IfNotPresent' }],
    },
  };
  store.pods.put(pod, 'api');
  const rec = store.pods.record('default', 'web')!;
  const done = () => {
    writes.flush();
    mb.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { rt, worker, rec, wakes, store, writes, dir, done };
}

const creates = (rt: FakeRuntime) => rt.calls.filter((c) => c === 'CreateContainer').length;

test('a name containerd still reserves for an unfinished create is waited for, never duplicated', async () => {
  const { rt, worker, rec, wakes, done } = setup();
  const name = `main_web_default_${rec.uid}_0`;
  rt.inFlight.set(name, 'feedbeef');
  await worker.sync(rec);
  assert.is(creates(rt), 1);
  assert.is(rt.containers.length, 0, 'no second copy under another attempt');
  assert.ok(wakes.length === 1 && wakes[0]! <= 500, `a prompt retry: ${wakes}`);
  // The earlier create finishes: the next pass starts that container.
  const template = {
    ...rt.containers[0]!,
    labels: { [POD_UID]: rec.uid, 'io.kubernetes.container.name': 'main' },
  };
  rt.finish(name, {
    ...template,
    podSandboxId: rt.sandboxes[0]!.id,
    metadata: { name: 'main', attempt: 0 },
    image: null,
    imageRef: '',
    annotations: { 'io.kubernetes.container.restartCount': '0' },
  } as T.Container & { name: string });
  await worker.sync(rec);
  assert.is(creates(rt), 1, 'no new create');
  assert.ok(rt.calls.includes('StartContainer feedbeef'));
  assert.is(rt.containers.length, 1);
  done();
});

test('after a power cut the new instance takes the next attempt: no name clash with the dead one', async () => {
  const { rt, worker, rec, done } = setup();
  await worker.sync(rec); // runs: sandbox attempt 0, container attempt 0
  for (const s of rt.sandboxes) s.state = 'SANDBOX_NOTREADY';
  for (const c of rt.containers) c.state = 'CONTAINER_EXITED';
  rt.calls = [];
  const after = (await worker.sync(rec)) as RuntimePod;
  assert.is(creates(rt), 1, 'created at the first try');
  const fresh = rt.containers.find((c) => c.state === 'CONTAINER_RUNNING')!;
  assert.is(fresh.metadata?.attempt, 1);
  assert.is(fresh.annotations['io.kubernetes.container.restartCount'], '1');
  assert.is(rt.sandboxes.find((s) => s.state === 'SANDBOX_READY')?.metadata?.attempt, 1);
  assert.ok(!rt.calls.includes('StopPodSandbox'), 'a dead sandbox without live containers is left to GC');
  assert.ok(after.containers.some((c) => c.id === fresh.id && c.state === 'CONTAINER_RUNNING'));
  done();
});

test('with nothing left in the runtime the restart count goes on from the log files', async () => {
  const { rt, worker, rec, dir, done } = setup();
  const logs = join(dir, 'logs', `default_web_${rec.uid}`, 'main');
  mkdirSync(logs, { recursive: true });
  for (const f of ['0.log', '1.log', '2.log.20250101-000000.gz']) writeFileSync(join(logs, f), '');
  await worker.sync(rec);
  const c = rt.containers[0]!;
  assert.is(c.annotations['io.kubernetes.container.restartCount'], '3');
  assert.is(c.metadata?.attempt, 3);
  done();
});

test('a pass given a fresh view of a running pod lists nothing: adoption costs one status per container', async () => {
  const { rt, worker, rec, writes, store, done } = setup();
  await worker.sync(rec);
  const view: RuntimePod = {
    uid: rec.uid,
    sandboxes: [...rt.sandboxes],
    containers: rt.containers.map((c) => ({ ...c })),
  };
  rt.calls = [];
  await worker.sync(rec, view);
  assert.equal(rt.calls, ['ContainerStatus']);
  writes.flush();
  assert.is(store.pods.get('default', 'web')?.status?.phase, 'Running');
  done();
});

test('a pod-network pod reports its sandbox IP, asked once per sandbox; its dead sandbox is stopped (network torn down) before the new one, every sandbox stopped before removal', async () => {
  const { rt, worker, rec, writes, store, done } = setup({ hostNetwork: false });
  await worker.sync(rec);
  const first = rt.sandboxes[0]!;
  writes.flush();
  assert.is(store.pods.get('default', 'web')?.status?.podIP, rt.ips.get(first.id));
  rt.calls = [];
  await worker.sync(rec);
  assert.not.ok(rt.calls.includes('PodSandboxStatus'), `cached: ${rt.calls}`);
  // A power cut: the sandbox is not ready and its containers exited.
  first.state = 'SANDBOX_NOTREADY';
  for (const c of rt.containers) c.state = 'CONTAINER_EXITED';
  rt.calls = [];
  await worker.sync(rec);
  assert.ok(rt.calls.indexOf('StopPodSandbox') < rt.calls.indexOf('RunPodSandbox'), `${rt.calls}`);
  const second = rt.sandboxes.find((s) => s.state === 'SANDBOX_READY')!;
  writes.flush();
  assert.is(store.pods.get('default', 'web')?.status?.podIP, rt.ips.get(second.id));
  assert.is.not(rt.ips.get(second.id), rt.ips.get(first.id));
  // Deletion: every sandbox stopped, then removed (the dead one too: its network goes with the stop).
  store.pods.markDeleting('default', 'web', 0);
  rt.calls = [];
  await worker.sync(store.pods.record('default', 'web')!);
  const stops = rt.calls.filter((c) => c === 'StopPodSandbox').length;
  assert.ok(stops >= 2, `${rt.calls}`);
  assert.ok(rt.calls.lastIndexOf('StopPodSandbox') < rt.calls.lastIndexOf('RemovePodSandbox'), `${rt.calls}`);
  assert.is(rt.sandboxes.length, 0);
  done();
});

test('a recovery of many pods has at most two RunPodSandbox calls per core in flight, and every pod gets its sandbox', async () => {
  const { rt, worker, store, done } = setup();
  let inFlight = 0;
  let most = 0;
  const release: (() => void)[] = [];
  const run = rt.runPodSandbox.bind(rt);
  rt.runPodSandbox = async (config) => {
    most = Math.max(most, ++inFlight);
    await new Promise<void>((r) => release.push(r));
    inFlight--;
    return run(config);
  };
  const pods = SANDBOX_CREATIONS + 10;
  const recs = Array.from({ length: pods }, (_, i) => {
    store.pods.put(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `p${i}`, namespace: 'default' },
        spec: { nodeName: 'n1', hostNetwork: true, containers: [{ name: 'main', image: 'busybox:1' }] },
      },
      'api',
    );
    return store.pods.record('default', `p${i}`)!;
  });
  const all = Promise.all(recs.map((r) => worker.sync(r)));
  // Answer the calls in flight one by one until every pod has been through.
  for (let turns = 0; turns < 100_000 && rt.sandboxes.length < recs.length; turns++) {
    await new Promise((r) => setImmediate(r));
    release.shift()?.();
  }
  await all;
  assert.is(most, SANDBOX_CREATIONS);
  assert.is(rt.calls.filter((c) => c === 'RunPodSandbox').length, pods);
  done();
});

test.run();
