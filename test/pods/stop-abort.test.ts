// A stopping agent is not held by a pod being deleted: an abort cancels the CRI stop calls in
// flight (unaryCall's signal, grpc-js call.cancel()), the pod manager's stop() returns, and the
// pod stays marked deleting in the metabase, with no failure and no status written, for the next
// start to finish. Against an in-process fake CRI server whose StopContainer waits until told.
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
const NODE = 'n1';

type Handler = (call: ServerUnaryCall<object, object>, cb: sendUnaryData<object>) => void;

/** One pod's sandbox and running container; StopContainer answers only while `answerStops`. */
class FakeCri {
  readonly server = new Server();
  calls: string[] = [];
  cancelled: string[] = [];
  answerStops = false;
  sandbox: T.PodSandbox | undefined;
  container: T.Container | undefined;

  constructor() {
    const answer = (method: string, res: () => object): Handler => {
      return (call, cb) => {
        this.calls.push(method);
        call.on('cancelled', () => this.cancelled.push(method));
        cb(null, res());
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
      StopContainer: (call, cb) => {
        this.calls.push('StopContainer');
        call.on('cancelled', () => this.cancelled.push('StopContainer'));
        if (!this.answerStops) return; // a container ignoring SIGTERM through a long grace period
        if (this.container) this.container.state = 'CONTAINER_EXITED';
        cb(null, {});
      },
    };
    const service = runtimeService();
    const impl = Object.fromEntries(
      Object.keys(service).map((m) => [
        m,
        handlers[m] ?? ((_c: unknown, cb: sendUnaryData<object>) => cb({ code: status.UNIMPLEMENTED })),
      ]),
    );
    this.server.addService(service, impl);
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
    this.sandbox = {
      id: 'sb1',
      metadata,
      state: 'SANDBOX_READY',
      createdAt: '1',
      labels,
      annotations: {},
      runtimeHandler: '',
    };
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

test('unaryCall: an abort cancels the call in flight; an aborted signal cancels it at once', async () => {
  const fake = new FakeCri();
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

test('an abort while a deleted pod waits out its grace period: stop() returns, the pod stays deleting, the next start removes it', async () => {
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

    const ac = new AbortController();
    const first = manager(ac.signal);
    const started = first.start().catch((e: unknown) => e);
    assert.ok(await waitFor(() => fake.calls.includes('StopContainer'), 60_000, 10), `${fake.calls}`);
    ac.abort();
    await within(first.stop(), 60_000, 'stop() after the abort');
    assert.is(await started, undefined);
    assert.ok(
      await waitFor(() => fake.cancelled.includes('StopContainer'), 60_000, 10),
      'the runtime saw the stop call cancelled',
    );
    assert.not.ok(fake.calls.includes('RemovePodSandbox'), `${fake.calls}`);
    // Still there, still deleting, its status as it was: nothing recorded the cancel as a failure.
    const after = store.pods.get('default', 'web');
    assert.ok(after?.metadata.deletionTimestamp, 'still marked deleting');
    assert.equal(after.status, before.status);
    assert.not.ok(
      lines.some((l) => l.startsWith('warn') || l.startsWith('error')),
      lines.join('\n'),
    );

    // The next start finishes the deletion.
    fake.answerStops = true;
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
  } finally {
    metabase.close();
    cri.close();
    fake.server.forceShutdown();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
