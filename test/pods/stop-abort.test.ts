// A stopping agent is not held by a pod being deleted or by an image pull: an abort cancels the
// CRI calls in flight (unaryCall's signal, grpc-js call.cancel()), the pod manager's stop()
// returns, and the pod is left as it was in the metabase (still deleting; not failed, no
// ErrImagePull), with no failure and no status written, for the next start to finish. Against an
// in-process fake CRI server whose StopContainer and PullImage wait until told.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { Client, credentials, Server, ServerCredentials, status } from '@grpc/grpc-js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import { systemClock } from '#lib/clock.ts';
import { CriClient } from '#lib/cri/client.ts';
import { descriptor } from '#lib/cri/proto.gen.ts';
import type * as T from '#lib/cri/types.ts';
import { isGrpcError } from '#lib/grpc/errors.ts';
import { lazyServices } from '#lib/grpc/services.ts';
import { unaryCall } from '#lib/grpc/unary.ts';
import type { Pod } from '#lib/kube/types.ts';
import type { Logger } from '#lib/log.ts';
import { ProbeManager } from '#lib/pods/probes/index.ts';
import { PodManager } from '#lib/pods/worker/manager.ts';
import { createStore } from '#lib/store/index.ts';
import { waitFor } from '../helpers/lab.ts';

const runtimeService = lazyServices(descriptor)('runtime.v1.RuntimeService');
const imageService = lazyServices(descriptor)('runtime.v1.ImageService');
const NODE = 'n1';

type Handler = (call: ServerUnaryCall<object, object>, cb: sendUnaryData<object>) => void;

/** The ready sandbox `sb1`. */
const readySandbox = (metadata: T.PodSandbox['metadata'], labels: T.StringMap): T.PodSandbox => ({
  id: 'sb1',
  metadata,
  state: 'SANDBOX_READY',
  createdAt: '1',
  labels,
  annotations: {},
  runtimeHandler: '',
});

/**
 * One pod's sandbox and container. The calls named in `holding` get no answer: StopContainer as for
 * a container ignoring SIGTERM through a long grace period, PullImage as from a registry that
 * accepted the connection and sends nothing.
 */
class FakeCri {
  readonly server = new Server();
  calls: string[] = [];
  cancelled: string[] = [];
  holding = new Set<string>();
  pulled = false;
  sandbox: T.PodSandbox | undefined;
  container: T.Container | undefined;

  constructor() {
    const answer = (method: string, res: () => object): Handler => {
      return (call, cb) => {
        this.calls.push(method);
        call.on('cancelled', () => this.cancelled.push(method));
        if (!this.holding.has(method)) cb(null, res());
      };
    };
    const handlers: Record<string, Handler> = {
      ListPodSandbox: answer('ListPodSandbox', () => ({ items: this.sandbox ? [this.sandbox] : [] })),
      ListContainers: answer('ListContainers', () => ({
        containers: this.container ? [this.container] : [],
      })),
      StopPodSandbox: answer('StopPodSandbox', () => {
        if (this.sandbox) this.sandbox.state = 'SANDBOX_NOTREADY';
        return {};
      }),
      RemovePodSandbox: answer('RemovePodSandbox', () => {
        this.sandbox = undefined;
        this.container = undefined;
        return {};
      }),
      RunPodSandbox: answer('RunPodSandbox', () => {
        const { metadata, labels } = (calls.last as { config: T.PodSandboxConfig }).config;
        this.sandbox = readySandbox(metadata as T.PodSandbox['metadata'], labels ?? {});
        return { podSandboxId: 'sb1' };
      }),
      PodSandboxStatus: answer('PodSandboxStatus', () => ({
        status: { ...this.sandbox, network: { ip: '10.0.0.2', additionalIps: [] } },
      })),
      CreateContainer: answer('CreateContainer', () => {
        const { config } = calls.last as { config: T.ContainerConfig };
        this.container = {
          id: 'c1',
          podSandboxId: 'sb1',
          metadata: { name: config.metadata.name, attempt: config.metadata.attempt ?? 0 },
          image: null,
          imageRef: 'sha256:1',
          state: 'CONTAINER_CREATED',
          createdAt: '2',
          labels: config.labels ?? {},
          annotations: config.annotations ?? {},
        };
        return { containerId: 'c1' };
      }),
      StartContainer: answer('StartContainer', () => {
        if (this.container) this.container.state = 'CONTAINER_RUNNING';
        return {};
      }),
      ContainerStatus: answer('ContainerStatus', () => ({
        status: {
          id: 'c1',
          metadata: this.container?.metadata,
          state: this.container?.state,
          createdAt: '2',
          startedAt: '3',
          finishedAt: '0',
          exitCode: 0,
          labels: this.container?.labels,
          annotations: this.container?.annotations,
          reason: '',
          message: '',
          logPath: '',
          imageRef: 'sha256:1',
        },
      })),
      StopContainer: answer('StopContainer', () => {
        if (this.container) this.container.state = 'CONTAINER_EXITED';
        return {};
      }),
    };
    const images: Record<string, Handler> = {
      ImageStatus: answer('ImageStatus', () => ({
        image: this.pulled ? { id: 'sha256:1', repoTags: [], repoDigests: [], size: '1' } : null,
      })),
      PullImage: answer('PullImage', () => {
        this.pulled = true;
        return { imageRef: 'sha256:1' };
      }),
    };
    // The request of the call being answered, for the handlers that build their answer from it.
    const calls = { last: {} as object };
    for (const [service, table] of [
      [runtimeService(), handlers],
      [imageService(), images],
    ] as const) {
      const impl = Object.fromEntries(
        Object.keys(service).map((m) => {
          const h = table[m];
          const wrapped: Handler = h
            ? (call, cb) => {
                calls.last = call.request;
                h(call, cb);
              }
            : (_c, cb) => cb({ code: status.UNIMPLEMENTED });
          return [m, wrapped];
        }),
      );
      this.server.addService(service, impl);
    }
  }

  listen(): Promise<number> {
    return new Promise((resolve, reject) =>
      this.server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, port) =>
        e ? reject(e) : resolve(port),
      ),
    );
  }

  /** The runtime holds `uid`'s pod: a ready sandbox with one running container. */
  hold(uid: string): void {
    const labels = { 'io.kubernetes.pod.uid': uid };
    const metadata = { name: 'web', uid, namespace: 'default', attempt: 0 };
    this.sandbox = readySandbox(metadata, labels);
    this.container = {
      id: 'c1',
      podSandboxId: 'sb1',
      metadata: { name: 'main', attempt: 0 },
      image: null,
      imageRef: 'sha256:1',
      state: 'CONTAINER_RUNNING',
      createdAt: '2',
      labels,
      annotations: {},
    };
  }
}

/** A logger that keeps every message with its level. */
function recordingLogger(lines: string[]): Logger {
  const log = (level: string) => (_obj: object, msg?: string) => void lines.push(`${level} ${msg ?? ''}`);
  const logger: Logger = {
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: () => logger,
  };
  return logger;
}

/** `p`, or a rejection after `ms`: only reached when the abort did not work (a deadline, not a timing). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} not done within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** A pod manager's world for one test: the fake runtime, a metabase, the log; all closed after `body`. */
async function withPods(
  body: (w: {
    fake: FakeCri;
    store: ReturnType<typeof createStore>;
    lines: string[];
    manager: (signal?: AbortSignal) => PodManager;
  }) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-stop-abort-'));
  const fake = new FakeCri();
  const port = await fake.listen();
  const cri = new CriClient({ endpoint: `127.0.0.1:${port}` });
  const metabase = openMetabase(dir);
  const store = createStore(metabase, { host: NODE });
  const lines: string[] = [];
  const manager = (signal?: AbortSignal) =>
    new PodManager({
      cri,
      store,
      log: recordingLogger(lines),
      clock: systemClock,
      nodeName: NODE,
      hostIP: '127.0.0.1',
      dataDir: dir,
      prober: new ProbeManager({ exec: (id, cmd, timeout) => cri.execSync(id, cmd, timeout) }),
      signal,
    });
  try {
    await body({ fake, store, lines, manager });
  } finally {
    metabase.close();
    cri.close();
    fake.server.forceShutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Starts a manager with a signal, aborts it once the runtime got `method` (held unanswered), and checks that stop()
 * returns (a deadline that only a failed abort reaches) and that the runtime saw the call cancelled.
 */
async function abortDuring(
  method: string,
  fake: FakeCri,
  manager: (signal?: AbortSignal) => PodManager,
): Promise<void> {
  fake.holding.add(method);
  const ac = new AbortController();
  const first = manager(ac.signal);
  const started = first.start().catch((e: unknown) => e);
  assert.ok(await waitFor(() => fake.calls.includes(method), 60_000, 10), `${fake.calls}`);
  ac.abort();
  await within(first.stop(), 60_000, 'stop() after the abort');
  assert.is(await started, undefined);
  assert.ok(await waitFor(() => fake.cancelled.includes(method), 60_000, 10), `${method} not cancelled`);
}

/** A warning or an error in the recorded log: a cancel taken for a failure. */
const isProblem = (line: string) => line.startsWith('warn') || line.startsWith('error');

test('unaryCall: an abort cancels the call in flight; an aborted signal cancels it at once', async () => {
  const fake = new FakeCri();
  fake.holding.add('StopContainer');
  const port = await fake.listen();
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  try {
    const def = runtimeService().StopContainer!;
    const ac = new AbortController();
    const pending = unaryCall(client, def, { containerId: 'c1', timeout: 3600 }, 3_600_000, ac.signal).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(
      await waitFor(() => fake.calls.includes('StopContainer'), 60_000, 10),
      'the call reached the server',
    );
    ac.abort();
    const err = await within(pending, 60_000, 'the cancelled call');
    assert.ok(isGrpcError(err) && err.code === status.CANCELLED, String(err));
    assert.ok(
      await waitFor(() => fake.cancelled.includes('StopContainer'), 60_000, 10),
      'the server saw it cancelled',
    );
    const early = await unaryCall(
      client,
      def,
      { containerId: 'c1', timeout: 1 },
      60_000,
      AbortSignal.abort(),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(isGrpcError(early) && early.code === status.CANCELLED, String(early));
  } finally {
    client.close();
    fake.server.forceShutdown();
  }
});

test('an abort while a deleted pod waits out its grace period: stop() returns, the pod stays deleting, the next start removes it', () =>
  withPods(async ({ fake, store, lines, manager }) => {
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        nodeName: NODE,
        terminationGracePeriodSeconds: 3600,
        containers: [{ name: 'main', image: 'busybox:1.36' }],
      },
    };
    store.pods.put(pod, 'api');
    const uid = store.pods.record('default', 'web')!.uid;
    fake.hold(uid);
    store.pods.markDeleting('default', 'web');
    const before = store.pods.get('default', 'web')!;

    await abortDuring('StopContainer', fake, manager);
    assert.not.ok(fake.calls.includes('RemovePodSandbox'), `${fake.calls}`);
    // Still there, still deleting, its status as it was: nothing recorded the cancel as a failure.
    const after = store.pods.get('default', 'web');
    assert.ok(after?.metadata.deletionTimestamp, 'still marked deleting');
    assert.equal(after.status, before.status);
    assert.not.ok(lines.some(isProblem), lines.join('\n'));

    // The next start finishes the deletion.
    fake.holding.clear();
    fake.calls = [];
    const second = manager();
    await within(second.start(), 60_000, 'the next start');
    await second.stop();
    assert.is(store.pods.get('default', 'web'), undefined);
    assert.ok(
      fake.calls.includes('StopContainer') && fake.calls.includes('RemovePodSandbox'),
      `${fake.calls}`,
    );
    assert.is(fake.sandbox, undefined);
  }));

type World = Parameters<Parameters<typeof withPods>[0]>[0];

/**
 * A new pod's first pass aborted while the runtime holds `method`: the pod keeps its status, no
 * Warning event, nothing logged as a failure. Then a start without abort must run the pod.
 * Returns the runtime calls of the aborted pass and of the next start.
 */
async function abortWhileStarting(method: string, w: World): Promise<{ first: string[]; next: string[] }> {
  const { fake, store, lines, manager } = w;
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default' },
    spec: { nodeName: NODE, containers: [{ name: 'main', image: 'registry.example/app:1' }] },
  };
  store.pods.put(pod, 'api');
  const before = store.pods.get('default', 'web')!;
  const eventsBefore = store.events.list().items.length;

  await abortDuring(method, fake, manager);
  // Its status as it was, no Failed event: nothing recorded the cancel as a failure.
  assert.equal(store.pods.get('default', 'web')?.status, before.status);
  const events = store.events.list().items.slice(eventsBefore);
  assert.not.ok(
    events.some((e) => e.type === 'Warning'),
    JSON.stringify(events.map((e) => [e.reason, e.message])),
  );
  assert.ok(lines.includes('info pod sync cancelled: the agent is stopping'), lines.join('\n'));
  assert.not.ok(lines.some(isProblem), lines.join('\n'));

  const first = fake.calls;
  fake.holding.clear();
  fake.calls = [];
  const second = manager();
  await within(second.start(), 60_000, 'the next start');
  const running = await waitFor(
    () => store.pods.get('default', 'web')?.status?.containerStatuses?.[0]?.state?.running,
    60_000,
    10,
  );
  await second.stop();
  assert.ok(running, JSON.stringify(store.pods.get('default', 'web')?.status));
  return { first, next: fake.calls };
}

test('an abort while a pod pulls its image: stop() returns, the pull is cancelled, no ErrImagePull; the next start pulls again and runs the pod', () =>
  withPods(async (w) => {
    const { first, next } = await abortWhileStarting('PullImage', w);
    assert.not.ok(first.includes('CreateContainer'), `${first}`);
    // The next start pulls again: no backoff left from the cancel.
    assert.ok(next.includes('PullImage') && next.includes('StartContainer'), `${next}`);
  }));

test('an abort while a container starts: no Failed event, no status; the next start starts the created container', () =>
  withPods(async (w) => {
    w.fake.pulled = true;
    const { next } = await abortWhileStarting('StartContainer', w);
    // The container the cancelled pass created is started, not created a second time.
    assert.ok(next.includes('StartContainer'), `${next}`);
    assert.not.ok(next.includes('CreateContainer'), `${next}`);
  }));

test.run();
