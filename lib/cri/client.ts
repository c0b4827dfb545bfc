import type { ChannelOptions, ServiceDefinition } from '@grpc/grpc-js';
import { Client, credentials, status as GrpcStatus } from '@grpc/grpc-js';
import { isGrpcError } from '#lib/grpc/errors.ts';
import { lazyServices } from '#lib/grpc/services.ts';
import { unaryCall } from '#lib/grpc/unary.ts';
import { notFound, unavailable } from '#lib/kube/status.ts';
import { load } from './codec.gen.ts';
import type { CriCallContext } from './errors.ts';
import { toStatusError } from './errors.ts';
import type * as T from './types.ts';

/** The pino-like logger CriClient reports to. */
export interface CriLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface CriClientOptions {
  /** `unix:///run/containerd/containerd.sock`; a bare absolute path is taken as a unix socket. */
  endpoint: string;
  /** Deadline of an ordinary call. Default 30 s. */
  timeoutMs?: number;
  /** Deadline of PullImage. Default 10 min. */
  pullTimeoutMs?: number;
  logger?: CriLogger;
  channelOptions?: ChannelOptions;
  /** Told about every call: the RPC, its gRPC status name (`OK`, `UNAVAILABLE`, ...), its duration. */
  onCall?: (method: string, code: string, seconds: number) => void;
}

const service = lazyServices(load);
const runtime = service('runtime.v1.RuntimeService');
const images = service('runtime.v1.ImageService');

type Target = CriCallContext['object'];
const container = (name: string): Target => ({ kind: 'containers', name });
const sandbox = (name: string): Target => ({ kind: 'podsandboxes', name });

/** A CRI runtime.v1 client over one gRPC channel; every failure is a Status error. */
export class CriClient {
  #endpoint: string;
  private client: Client;
  private readonly channelOptions: ChannelOptions | undefined;
  private readonly timeoutMs: number;
  private readonly pullTimeoutMs: number;
  private readonly log: CriLogger | undefined;
  private readonly onCall: CriClientOptions['onCall'];

  constructor(opts: CriClientOptions) {
    this.#endpoint = opts.endpoint.startsWith('/') ? `unix://${opts.endpoint}` : opts.endpoint;
    this.channelOptions = opts.channelOptions;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.pullTimeoutMs = opts.pullTimeoutMs ?? 600_000;
    this.log = opts.logger;
    this.onCall = opts.onCall;
    // grpc-js reconnects on its own; the cap on its backoff finds a restarted runtime quickly.
    // 16 MiB messages as kubelet allows (ExecSync output, long lists).
    this.client = this.connect();
  }

  /** The runtime this client talks to. */
  get endpoint(): string {
    return this.#endpoint;
  }

  private connect(): Client {
    return new Client(this.#endpoint, credentials.createInsecure(), {
      'grpc.max_reconnect_backoff_ms': 5_000,
      'grpc.max_receive_message_length': 16 * 1024 * 1024,
      ...this.channelOptions,
    });
  }

  /** Points the client at another runtime (one found on another socket); calls in flight fail. */
  retarget(endpoint: string): void {
    const next = endpoint.startsWith('/') ? `unix://${endpoint}` : endpoint;
    if (next === this.#endpoint) return;
    this.client.close();
    this.#endpoint = next;
    this.client = this.connect();
  }

  /** Resolves once the channel is connected; rejects with 503 after `timeoutMs`. */
  ready(timeoutMs = this.timeoutMs): Promise<void> {
    return new Promise((resolve, reject) =>
      this.client.waitForReady(Date.now() + timeoutMs, (err) =>
        err
          ? reject(unavailable(`container runtime at ${this.endpoint} not reachable within ${timeoutMs} ms`))
          : resolve(),
      ),
    );
  }

  /** Closes the channel; later calls fail. */
  close(): void {
    this.client.close();
  }

  version(): Promise<T.VersionResponse> {
    return this.call(runtime, 'Version', { version: '0.1.0' }); // the API version kubelet sends
  }

  async status(verbose = false): Promise<T.RuntimeStatusResult> {
    type Res = { status: { conditions: T.RuntimeCondition[] } | null; info: T.StringMap };
    const res = await this.call<Res>(runtime, 'Status', { verbose });
    return { conditions: res.status?.conditions ?? [], info: res.info };
  }

  /** Creates and starts a sandbox; returns its id. `signal` cancels the call. */
  async runPodSandbox(
    config: T.PodSandboxConfig,
    runtimeHandler = '',
    signal?: AbortSignal,
  ): Promise<string> {
    const req = { config, runtimeHandler };
    const res = await this.call<{ podSandboxId: string }>(runtime, 'RunPodSandbox', req, { signal });
    return res.podSandboxId;
  }

  /** Stops a sandbox, killing its containers; idempotent. `signal` cancels the call. */
  async stopPodSandbox(id: string, signal?: AbortSignal): Promise<void> {
    await this.call(runtime, 'StopPodSandbox', { podSandboxId: id }, { target: sandbox(id), signal });
  }

  /** Removes a sandbox and its containers; idempotent. `signal` cancels the call. */
  async removePodSandbox(id: string, signal?: AbortSignal): Promise<void> {
    await this.call(runtime, 'RemovePodSandbox', { podSandboxId: id }, { target: sandbox(id), signal });
  }

  /** A sandbox's status; `signal` cancels the call. */
  async podSandboxStatus(id: string, signal?: AbortSignal): Promise<T.PodSandboxStatus> {
    type Res = { status: T.PodSandboxStatus | null };
    const req = { podSandboxId: id };
    const res = await this.call<Res>(runtime, 'PodSandboxStatus', req, { target: sandbox(id), signal });
    if (!res.status) throw notFound('podsandboxes', id);
    return res.status;
  }

  /** The sandboxes (those the filter names); `signal` cancels the call. */
  async listPodSandbox(filter?: T.PodSandboxFilter, signal?: AbortSignal): Promise<T.PodSandbox[]> {
    return (await this.call<{ items: T.PodSandbox[] }>(runtime, 'ListPodSandbox', { filter }, { signal }))
      .items;
  }

  /**
   * Creates a container in a sandbox (whose config is passed again, as CRI wants); returns its id.
   * `signal` cancels the call.
   */
  async createContainer(
    podId: string,
    config: T.ContainerConfig,
    sandboxConfig: T.PodSandboxConfig,
    signal?: AbortSignal,
  ): Promise<string> {
    const req = { podSandboxId: podId, config, sandboxConfig };
    type Res = { containerId: string };
    return (await this.call<Res>(runtime, 'CreateContainer', req, { signal })).containerId;
  }

  /** Starts a created container. `signal` cancels the call. */
  async startContainer(id: string, signal?: AbortSignal): Promise<void> {
    await this.call(runtime, 'StartContainer', { containerId: id }, { target: container(id), signal });
  }

  /** Signals the container's stop signal and kills it after `timeoutSeconds`; idempotent. `signal` cancels the call. */
  async stopContainer(id: string, timeoutSeconds: number, signal?: AbortSignal): Promise<void> {
    // The runtime answers once the container is gone, so the deadline covers the grace period.
    const req = { containerId: id, timeout: timeoutSeconds };
    const timeoutMs = this.timeoutMs + timeoutSeconds * 1000;
    await this.call(runtime, 'StopContainer', req, { target: container(id), timeoutMs, signal });
  }

  /** Removes a container, killing it first if it runs; idempotent. `signal` cancels the call. */
  async removeContainer(id: string, signal?: AbortSignal): Promise<void> {
    await this.call(runtime, 'RemoveContainer', { containerId: id }, { target: container(id), signal });
  }

  /**
   * Asks the runtime to reopen a container's log at its path, after the file there was renamed
   * (rotation). `signal` cancels the call.
   */
  async reopenContainerLog(id: string, signal?: AbortSignal): Promise<void> {
    await this.call(runtime, 'ReopenContainerLog', { containerId: id }, { target: container(id), signal });
  }

  /** The containers (those the filter names); `signal` cancels the call. */
  async listContainers(filter?: T.ContainerFilter, signal?: AbortSignal): Promise<T.Container[]> {
    type Res = { containers: T.Container[] };
    return (await this.call<Res>(runtime, 'ListContainers', { filter }, { signal })).containers;
  }

  /** A container's status; `signal` cancels the call. */
  async containerStatus(id: string, signal?: AbortSignal): Promise<T.ContainerStatus> {
    type Res = { status: T.ContainerStatus | null };
    const req = { containerId: id };
    const res = await this.call<Res>(runtime, 'ContainerStatus', req, { target: container(id), signal });
    if (!res.status) throw notFound('containers', id);
    return res.status;
  }

  /**
   * Runs a command in a container and collects its output; `timeoutSeconds` 0 means no limit.
   * `signal` cancels the call.
   */
  execSync(
    id: string,
    cmd: string[],
    timeoutSeconds: number,
    signal?: AbortSignal,
  ): Promise<T.ExecSyncResult> {
    const req = { containerId: id, cmd, timeout: timeoutSeconds };
    const timeoutMs = this.timeoutMs + timeoutSeconds * 1000;
    return this.call(runtime, 'ExecSync', req, { target: container(id), timeoutMs, signal });
  }

  /** Prepares a streaming exec; returns the runtime's single-use URL. `signal` cancels the call. */
  async exec(req: T.ExecRequest, signal?: AbortSignal): Promise<string> {
    const target = container(req.containerId);
    return (await this.call<{ url: string }>(runtime, 'Exec', req, { target, signal })).url;
  }

  /** Prepares a streaming attach to a running container's stdio; returns the runtime's URL. */
  async attach(req: T.AttachRequest): Promise<string> {
    return (await this.call<{ url: string }>(runtime, 'Attach', req, { target: container(req.containerId) }))
      .url;
  }

  /** Prepares a port forward into a pod's network namespace; returns the runtime's URL. */
  async portForward(podSandboxId: string, ports: number[] = []): Promise<string> {
    const req = { podSandboxId, port: ports };
    const target = { kind: 'podsandboxes', name: podSandboxId };
    return (await this.call<{ url: string }>(runtime, 'PortForward', req, { target })).url;
  }

  /** Usage of every container (or those the filter names); `signal` cancels the call. */
  async listContainerStats(
    filter?: { id?: string; podSandboxId?: string },
    signal?: AbortSignal,
  ): Promise<T.ContainerStats[]> {
    type Res = { stats: T.ContainerStats[] };
    return (await this.call<Res>(runtime, 'ListContainerStats', { filter }, { signal })).stats;
  }

  /** The images (those the filter names); `signal` cancels the call. */
  async listImages(filter?: { image: T.ImageSpec }, signal?: AbortSignal): Promise<T.Image[]> {
    return (await this.call<{ images: T.Image[] }>(images, 'ListImages', { filter }, { signal })).images;
  }

  /** The image, or null when the runtime does not have it. `signal` cancels the call. */
  async imageStatus(image: string, signal?: AbortSignal): Promise<T.Image | null> {
    const req = { image: { image } };
    return (await this.call<{ image: T.Image | null }>(images, 'ImageStatus', req, { signal })).image;
  }

  /** Pulls an image; returns its reference (the image id). `signal` cancels the pull. */
  async pullImage(
    image: string,
    opts: { auth?: T.AuthConfig; sandboxConfig?: T.PodSandboxConfig; signal?: AbortSignal | undefined } = {},
  ) {
    const { signal, ...rest } = opts;
    const req = { image: { image }, ...rest };
    const target = { kind: 'images', name: image };
    type Res = { imageRef: string };
    return (await this.call<Res>(images, 'PullImage', req, { target, timeoutMs: this.pullTimeoutMs, signal }))
      .imageRef;
  }

  // One unary call (see unaryCall: while the runtime is down it fails at once with UNAVAILABLE),
  // timed for the metrics hook and translated into a Status at the adapter edge.
  private call<Res>(
    svc: () => ServiceDefinition,
    method: string,
    req: object,
    o: { target?: Target | undefined; timeoutMs?: number; signal?: AbortSignal | undefined } = {},
  ) {
    const { target, timeoutMs = this.timeoutMs, signal } = o;
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    return unaryCall<Res>(this.client, svc()[method]!, req, timeoutMs, signal).then(
      (res) => {
        const took = seconds();
        this.onCall?.(method, 'OK', took);
        this.log?.debug({ method, ms: Math.round(took * 1000) }, 'CRI call');
        return res;
      },
      (err: unknown) => {
        const took = seconds();
        const grpc = isGrpcError(err) ? err : undefined;
        this.onCall?.(method, grpc ? (GrpcStatus[grpc.code] ?? String(grpc.code)) : 'UNKNOWN', took);
        this.log?.debug(
          { method, ms: Math.round(took * 1000), code: grpc?.code, details: grpc?.details },
          'CRI call failed',
        );
        const ctx = { endpoint: this.endpoint, method, timeoutMs, aborted: signal?.aborted === true };
        throw toStatusError(err, target ? { ...ctx, object: target } : ctx);
      },
    );
  }
}
