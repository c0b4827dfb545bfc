// A stopping agent is not held by a pod being deleted or by an image pull: an abort cancels the
// CRI calls in flight (unaryCall's signal, grpc-js call.cancel()), the pod manager's stop()
// returns, and the pod is left as it was in the metabase (still deleting; not failed, no
// ErrImagePull), with no failure and no status written, for the next start to finish. The short
// calls too (the lists, ImageStatus, RemovePodSandbox), the garbage collector's, log rotation's
// and a restart request's; the API's runtime calls (exec, the node API's run, metrics) end with
// the agent's shutdown, never with a client's disconnect. Against an in-process fake CRI server
// whose calls named in `holding` never answer.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { Client, credentials, Server, ServerCredentials, status } from '@grpc/grpc-js';
import { fromJSON, type ServiceDefinition } from '@grpc/proto-loader';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import { createApp } from '#lib/app.ts';
import { systemClock } from '#lib/clock.ts';
import { CriClient } from '#lib/cri/client.ts';
import { load } from '#lib/cri/codec.gen.ts';
import { descriptor } from '#lib/cri/proto.gen.ts';
import type * as T from '#lib/cri/types.ts';
import { isGrpcError } from '#lib/grpc/errors.ts';
import { lazyServices } from '#lib/grpc/services.ts';
import { unaryCall } from '#lib/grpc/unary.ts';
import { defaultLimits } from '#lib/http/limits.ts';
import { isStatusError } from '#lib/kube/status.ts';
import type { Pod } from '#lib/kube/types.ts';
import type { Logger } from '#lib/log.ts';
import { createNodeApiApp } from '#lib/node-api/app.ts';
import { ContainerLogRotator } from '#lib/pods/logs/rotate.ts';
import { ProbeManager } from '#lib/pods/probes/index.ts';
import { MANAGED_BY } from '#lib/pods/runtime/labels.ts';
import { StatsCollector } from '#lib/pods/runtime/stats.ts';
import { collectGarbage } from '#lib/pods/worker/gc.ts';
import { PodManager } from '#lib/pods/worker/manager.ts';
import { RestartRequests } from '#lib/pods/worker/restart-requests.ts';
import { createStore } from '#lib/store/index.ts';
import { waitFor } from '../helpers/lab.ts';

const runtimeService = lazyServices(load)('runtime.v1.RuntimeService');
// The fake runtime's side of the CRI (Outpost's codecs only call it): @grpc/proto-loader's, as
// bench/fake-cri's.
const served = fromJSON(descriptor() as Parameters<typeof fromJSON>[0], {
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
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
  /** The log path ContainerStatus reports. */
  logPath = '';

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
          logPath: this.logPath,
          imageRef: 'sha256:1',
        },
      })),
      StopContainer: answer('StopContainer', () => {
        if (this.container) this.container.state = 'CONTAINER_EXITED';
        return {};
      }),
      ExecSync: answer('ExecSync', () => ({
        stdout: Buffer.from('ok\n'),
        stderr: Buffer.alloc(0),
        exitCode: 0,
      })),
      Exec: answer('Exec', () => ({ url: 'http://127.0.0.1:1/exec/none' })),
      ReopenContainerLog: answer('ReopenContainerLog', () => ({})),
      ListContainerStats: answer('ListContainerStats', () => ({ stats: [] })),
    };
    const images: Record<string, Handler> = {
      ListImages: answer('ListImages', () => ({ images: [] })),
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
      [served['runtime.v1.RuntimeService'] as ServiceDefinition, handlers],
      [served['runtime.v1.ImageService'] as ServiceDefinition, images],
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

/**
 * A pod manager's world for one test: the fake runtime, a metabase, the log; all closed after `body`.
 * The client's deadline is an hour: a call no abort cancels is never ended by it within a test.
 */
async function withPods(
  body: (w: {
    fake: FakeCri;
    cri: CriClient;
    store: ReturnType<typeof createStore>;
    lines: string[];
    manager: (signal?: AbortSignal) => PodManager;
  }) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-stop-abort-'));
  const fake = new FakeCri();
  const port = await fake.listen();
  const cri = new CriClient({ endpoint: `127.0.0.1:${port}`, timeoutMs: 3_600_000 });
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
    await body({ fake, cri, store, lines, manager });
  } finally {
    metabase.close();
    cri.close();
    fake.server.forceShutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Starts a manager with a signal, aborts it once the runtime got `method` (held unanswered), and checks that stop()
 * and start() return (a deadline that only a failed abort reaches) and that the runtime saw the call cancelled.
 * Returns what start() settled with (its error, when the abort came during its listing of the runtime).
 */
async function abortDuring(
  method: string,
  fake: FakeCri,
  manager: (signal?: AbortSignal) => PodManager,
): Promise<unknown> {
  fake.holding.add(method);
  const ac = new AbortController();
  const first = manager(ac.signal);
  const started = first.start().catch((e: unknown) => e);
  assert.ok(await waitFor(() => fake.calls.includes(method), 60_000, 10), `${fake.calls}`);
  ac.abort();
  await within(first.stop(), 60_000, 'stop() after the abort');
  const outcome = await within(started, 60_000, 'start() after the abort');
  assert.ok(await waitFor(() => fake.cancelled.includes(method), 60_000, 10), `${method} not cancelled`);
  return outcome;
}

/** Puts the pod `web` (one container `main`) bound to this node; returns its uid. */
function putWeb(store: ReturnType<typeof createStore>): string {
  const spec = { nodeName: NODE, containers: [{ name: 'main', image: 'busybox:1.36' }] };
  store.pods.put(
    { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default' }, spec },
    'api',
  );
  return store.pods.record('default', 'web')!.uid;
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

    assert.is(await abortDuring('StopContainer', fake, manager), undefined);
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

  assert.is(await abortDuring(method, fake, manager), undefined);
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

test('an abort while the start lists the runtime: the list is cancelled, nothing says the runtime is unreachable', () =>
  withPods(async ({ fake, store, lines, manager }) => {
    putWeb(store);
    const outcome = await abortDuring('ListContainers', fake, manager);
    // start() ends with the cancel (the pods module has returned on the abort already), a 503.
    assert.ok(isStatusError(outcome) && outcome.code === 503, String(outcome));
    // Both lists go out at once; on a loaded machine ListPodSandbox may still be in flight at the
    // abort, and whichever is cancelled first names the error.
    assert.match(outcome.message, /(ListContainers|ListPodSandbox) on the container runtime at/);
    assert.match(outcome.message, 'was cancelled: the agent is stopping');
    assert.not.ok(fake.calls.includes('RunPodSandbox'), `${fake.calls}`);
    assert.not.ok(lines.some(isProblem), lines.join('\n'));
  }));

test('an abort while the image of a new pod is looked up (ImageStatus): no Failed event, no status; the next start pulls and runs the pod', () =>
  withPods(async (w) => {
    const { first, next } = await abortWhileStarting('ImageStatus', w);
    assert.not.ok(first.includes('PullImage') || first.includes('CreateContainer'), `${first}`);
    assert.ok(next.includes('PullImage') && next.includes('StartContainer'), `${next}`);
  }));

test('an abort while the IP of a new pod is asked (PodSandboxStatus): no status without its IP, no Failed event; the next start runs the pod', () =>
  withPods(async (w) => {
    w.fake.pulled = true;
    const { first } = await abortWhileStarting('PodSandboxStatus', w);
    assert.not.ok(first.includes('CreateContainer'), `${first}`);
  }));

test('an abort while the sandbox of a deleted pod is removed (RemovePodSandbox): stop() returns, the pod stays deleting, the next start removes it', () =>
  withPods(async ({ fake, store, lines, manager }) => {
    fake.hold(putWeb(store));
    // Nothing left running: the pass goes straight to removing the sandbox.
    fake.container!.state = 'CONTAINER_EXITED';
    fake.sandbox!.state = 'SANDBOX_NOTREADY';
    store.pods.markDeleting('default', 'web');

    assert.is(await abortDuring('RemovePodSandbox', fake, manager), undefined);
    assert.ok(store.pods.get('default', 'web')?.metadata.deletionTimestamp, 'still marked deleting');
    assert.ok(lines.includes('info pod sync cancelled: the agent is stopping'), lines.join('\n'));
    assert.not.ok(lines.some(isProblem), lines.join('\n'));

    fake.holding.clear();
    const second = manager();
    await within(second.start(), 60_000, 'the next start');
    await second.stop();
    assert.is(store.pods.get('default', 'web'), undefined);
    assert.is(fake.sandbox, undefined);
  }));

test('an abort while the garbage collector stops a sandbox: the stop is cancelled and the collection ends', () =>
  withPods(async ({ fake, cri, lines }) => {
    fake.hold('gone-uid');
    fake.sandbox!.annotations[MANAGED_BY] = 'metabase-1';
    fake.holding.add('StopPodSandbox');
    const ac = new AbortController();
    const collected = collectGarbage({
      cri,
      log: recordingLogger(lines),
      runtime: new Map([['gone-uid', { uid: 'gone-uid', sandboxes: [fake.sandbox!], containers: [] }]]),
      known: new Set(['another-uid']),
      managedBy: 'metabase-1',
      signal: ac.signal,
    });
    assert.ok(await waitFor(() => fake.calls.includes('StopPodSandbox'), 60_000, 10), `${fake.calls}`);
    ac.abort();
    await within(collected, 60_000, 'the collection after the abort');
    assert.ok(await waitFor(() => fake.cancelled.includes('StopPodSandbox'), 60_000, 10), 'not cancelled');
    assert.not.ok(lines.some(isProblem), lines.join('\n'));
  }));

/** The pod `web` the runtime holds: one running container, labelled as the API's lookups ask for. */
function holdWeb(fake: FakeCri, store: World['store']): void {
  const uid = putWeb(store);
  fake.hold(uid);
  fake.container!.labels = {
    'io.kubernetes.pod.uid': uid,
    'io.kubernetes.pod.name': 'web',
    'io.kubernetes.pod.namespace': 'default',
    'io.kubernetes.container.name': 'main',
  };
}

/**
 * What both APIs are built on: the fake runtime holding the pod `web` (holdWeb), the stats over
 * it, and the agent's shutdown signal.
 */
function sharedDeps({ fake, cri, store, lines }: World) {
  holdWeb(fake, store);
  const shutdown = new AbortController();
  const deps = {
    store,
    log: recordingLogger(lines),
    now: Date.now,
    nodeName: NODE,
    shutdown: shutdown.signal,
    health: () => [],
    cri,
    stats: new StatsCollector(cri, NODE, Date.now),
  };
  return { deps, shutdown };
}

/** The local API over the fake runtime (sharedDeps). */
function apiWorld(w: World) {
  const { deps, shutdown } = sharedDeps(w);
  return { app: createApp({ ...deps, restarts: new RestartRequests(Date.now) }), shutdown };
}

/** The node API over the same runtime (every caller authenticated and allowed), with its shutdown. */
function nodeApiWorld(w: World) {
  const { deps, shutdown } = sharedDeps(w);
  const nodeAuth = {
    authenticateToken: async () => ({ username: 'system:kube-apiserver', groups: [] }),
    authorize: async () => {},
  };
  const app = createNodeApiApp({
    ...deps,
    auth: {},
    limits: defaultLimits(Date.now),
    nodeAuth: nodeAuth as never,
  });
  const request = (path: string, init: RequestInit = {}) =>
    app.request(path, { ...init, headers: { authorization: 'Bearer t' } });
  return { app: { request }, shutdown };
}

type Answer = {
  status: number;
  body: { reason: string; message: string; details?: { causes?: { message: string }[] } };
};

/** What shutdownDuring sends its requests to: the local API or the node API, with its shutdown. */
type Api = {
  app: { request: (path: string, init?: RequestInit) => Response | Promise<Response> };
  shutdown: AbortController;
};

/**
 * Sends a request (`body` as JSON), aborts the shutdown once the runtime holds `method`, and
 * returns the answer.
 */
async function shutdownDuring(
  w: World,
  api: Api,
  method: string,
  path: string,
  verb = 'GET',
  body?: object,
): Promise<Answer> {
  w.fake.holding.add(method);
  w.fake.calls = [];
  const init: RequestInit = body
    ? { method: verb, body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
    : { method: verb };
  const pending = api.app.request(path, init);
  assert.ok(await waitFor(() => w.fake.calls.includes(method), 60_000, 10), `${w.fake.calls}`);
  api.shutdown.abort();
  const res = await within(Promise.resolve(pending), 60_000, `${verb} ${path} after the shutdown`);
  assert.ok(await waitFor(() => w.fake.cancelled.includes(method), 60_000, 10), `${method} not cancelled`);
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}

test("a restart request: the agent's shutdown cancels its stops (503, the agent is stopping, logged at info); the client's own signal does not", () =>
  withPods(async (w) => {
    const api = apiWorld(w);
    const path = '/api/v1/namespaces/default/pods/web/restart';
    // A client that has gone away (its request's signal aborted) does not cancel the stops.
    const gone = await api.app.request(path, { method: 'POST', signal: AbortSignal.abort() });
    assert.is(gone.status, 200, await gone.clone().text());
    assert.is(w.fake.container?.state, 'CONTAINER_EXITED', `${w.fake.calls}`);

    w.fake.container!.state = 'CONTAINER_RUNNING';
    const { status, body } = await shutdownDuring(w, api, 'StopContainer', path, 'POST');
    assert.is(status, 503, JSON.stringify(body));
    assert.is(body.reason, 'ServiceUnavailable');
    assert.is(body.message, 'pods "web" cannot be restarted: the agent is stopping');
    assert.match(body.details?.causes?.[0]?.message ?? '', 'StopContainer on the container runtime at');
    assert.ok(w.lines.includes('info restart cancelled: the agent is stopping'), w.lines.join('\n'));
    assert.not.ok(w.lines.some(isProblem), w.lines.join('\n'));
  }));

const JSON_EXEC = '/pods/default/web/exec';
const KEADM_EXEC = '/api/v1/namespaces/default/pods/web/exec?command=true';
const TOP_PODS = '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods';

for (const [what, method, path, verb, world, json] of [
  ['a log request', 'ListContainers', '/api/v1/namespaces/default/pods/web/log', 'GET', apiWorld],
  ['an exec request', 'ListContainers', KEADM_EXEC, 'POST', apiWorld],
  ['an image list', 'ListImages', '/images', 'GET', apiWorld],
  ["keadm's exec", 'ExecSync', KEADM_EXEC, 'POST', apiWorld],
  ['a JSON exec', 'ExecSync', JSON_EXEC, 'POST', apiWorld, { command: ['true'] }],
  ['a JSON exec with stdin', 'Exec', JSON_EXEC, 'POST', apiWorld, { command: ['cat'], stdin: 'x' }],
  ['kubectl top pod', 'ListContainerStats', TOP_PODS, 'GET', apiWorld],
  ["the node API's run", 'ExecSync', '/run/default/web/main?cmd=true', 'POST', nodeApiWorld],
  ["the node API's stats summary", 'ListContainerStats', '/stats/summary', 'GET', nodeApiWorld],
  ["the node API's resource metrics", 'ListContainerStats', '/metrics/resource', 'GET', nodeApiWorld],
] as const) {
  test(`${what}: the agent's shutdown cancels its ${method}, a 503 saying so`, () =>
    withPods(async (w) => {
      const { status, body } = await shutdownDuring(w, world(w), method, path, verb, json);
      assert.is(status, 503, JSON.stringify(body));
      assert.is(body.reason, 'ServiceUnavailable');
      assert.match(body.message, `${method} on the container runtime at`);
      assert.match(body.message, 'was cancelled: the agent is stopping');
      assert.not.ok(w.lines.some(isProblem), w.lines.join('\n'));
    }));
}

// The command ran to its end and answered (the fake's server side reports even a finished call as
// cancelled once its stream closes: the answer is what shows it was not).
test("a JSON exec and the node API's run: a client that went away does not cancel the command", async () => {
  const gone = AbortSignal.abort();
  await withPods(async (w) => {
    const res = await apiWorld(w).app.request(JSON_EXEC, {
      method: 'POST',
      body: JSON.stringify({ command: ['true'] }),
      headers: { 'content-type': 'application/json' },
      signal: gone,
    });
    assert.is(res.status, 200, await res.clone().text());
    assert.equal(await res.json(), { stdout: 'ok\n', stderr: '', exitCode: 0 });
  });
  await withPods(async (w) => {
    const res = await nodeApiWorld(w).app.request('/run/default/web/main?cmd=true', {
      method: 'POST',
      signal: gone,
    });
    assert.is(res.status, 200, await res.clone().text());
    assert.is(await res.text(), 'ok\n');
  });
});

test('an abort while log rotation asks the runtime to reopen a log: the call is cancelled, the file gets its name back, no warning', () =>
  withPods(async ({ fake, cri, lines }) => {
    fake.hold('uid-web');
    const dir = mkdtempSync(join(tmpdir(), 'outpost-stop-abort-log-'));
    try {
      fake.logPath = join(dir, '0.log');
      writeFileSync(fake.logPath, 'a line past the limit\n');
      fake.holding.add('ReopenContainerLog');
      const rotator = new ContainerLogRotator({
        cri,
        policy: { maxSize: 1, maxFiles: 2 },
        log: recordingLogger(lines),
        owns: () => true,
      });
      const ac = new AbortController();
      const pass = rotator.pass(ac.signal);
      assert.ok(await waitFor(() => fake.calls.includes('ReopenContainerLog'), 60_000, 10), `${fake.calls}`);
      ac.abort();
      assert.is(await within(pass, 60_000, 'the rotation pass after the abort'), 0);
      assert.ok(
        await waitFor(() => fake.cancelled.includes('ReopenContainerLog'), 60_000, 10),
        'not cancelled',
      );
      assert.ok(existsSync(fake.logPath), 'the log has its name back');
      assert.not.ok(lines.some(isProblem), lines.join('\n'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }));

test.run();
