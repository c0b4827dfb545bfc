// The fake runtime's state, kubemark's idea for Outpost: sandboxes and containers "run" the moment
// they are asked to, every image is present, ExecSync answers with exit code 0 and no output, and a
// started container's log holds one CRI-format line. No process, namespace or file system is
// touched besides that log file. Bench tooling only (never bundled into the agent).
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ContainerConfig, PodSandboxConfig } from '#lib/cri/types.ts';

type Map_ = Record<string, string>;

interface Sandbox {
  id: string;
  config: PodSandboxConfig;
  state: 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
  createdAt: string;
  ip: string;
  hostNetwork: boolean;
  runtimeHandler: string;
}

interface Container {
  id: string;
  podSandboxId: string;
  config: ContainerConfig;
  state: 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED';
  createdAt: string;
  startedAt: string;
  finishedAt: string;
  exitCode: number;
  reason: string;
  logPath: string;
}

/** A gRPC-shaped failure: the status code (grpc-js `status`) and its message. */
export class FakeCriError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}
const NOT_FOUND = 5;
const FAILED_PRECONDITION = 9;

const nowNs = () => (BigInt(Date.now()) * 1_000_000n).toString();
const newId = () => randomBytes(32).toString('hex');
const imageId = (ref: string) => `sha256:${Buffer.from(ref).toString('hex').padEnd(64, '0').slice(0, 64)}`;
const matches = (labels: Map_, selector: Map_ | undefined) =>
  Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);

/** One fake runtime: what a socket's RuntimeService and ImageService answer from. */
export class FakeRuntime {
  readonly sandboxes = new Map<string, Sandbox>();
  readonly containers = new Map<string, Container>();
  private nextIp = 2;
  /** Counts of calls by method, for tests and the bench. */
  readonly calls = new Map<string, number>();

  count(method: string): void {
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
  }

  version() {
    return {
      version: '0.1.0',
      runtimeName: 'outpost-fake-cri',
      runtimeVersion: '0.1.0',
      runtimeApiVersion: 'v1',
    };
  }

  status() {
    const ready = (type: string) => ({ type, status: true, reason: '', message: '' });
    return { status: { conditions: [ready('RuntimeReady'), ready('NetworkReady')] }, info: {} };
  }

  runPodSandbox(config: PodSandboxConfig, runtimeHandler = ''): string {
    const id = newId();
    const hostNetwork = config.linux?.securityContext?.namespaceOptions?.network === 'NODE';
    const n = this.nextIp++;
    const ip = hostNetwork ? '' : `10.88.${(n >> 8) & 255}.${n & 255}`;
    this.sandboxes.set(id, {
      id,
      config,
      state: 'SANDBOX_READY',
      createdAt: nowNs(),
      ip,
      hostNetwork,
      runtimeHandler,
    });
    return id;
  }

  private sandbox(id: string): Sandbox {
    const s = this.sandboxes.get(id);
    if (!s)
      throw new FakeCriError(NOT_FOUND, `an error occurred when try to find sandbox "${id}": not found`);
    return s;
  }

  private container(id: string): Container {
    const c = this.containers.get(id);
    if (!c)
      throw new FakeCriError(NOT_FOUND, `an error occurred when try to find container "${id}": not found`);
    return c;
  }

  stopPodSandbox(id: string): void {
    const s = this.sandboxes.get(id);
    if (!s) return; // idempotent, as CRI asks
    for (const c of this.containers.values()) if (c.podSandboxId === id) this.exit(c, 137, 'Error');
    s.state = 'SANDBOX_NOTREADY';
  }

  removePodSandbox(id: string): void {
    for (const c of [...this.containers.values()]) if (c.podSandboxId === id) this.containers.delete(c.id);
    this.sandboxes.delete(id);
  }

  podSandboxStatus(id: string) {
    const s = this.sandbox(id);
    const mode = s.hostNetwork ? 'NODE' : 'POD';
    return {
      status: {
        ...this.sandboxEntry(s),
        network: { ip: s.ip, additionalIps: [] },
        linux: {
          namespaces: {
            options: { network: mode, pid: 'CONTAINER', ipc: mode === 'NODE' ? 'NODE' : 'POD', targetId: '' },
          },
        },
      },
      info: {},
    };
  }

  private sandboxEntry(s: Sandbox) {
    return {
      id: s.id,
      metadata: s.config.metadata,
      state: s.state,
      createdAt: s.createdAt,
      labels: s.config.labels ?? {},
      annotations: s.config.annotations ?? {},
      runtimeHandler: s.runtimeHandler,
    };
  }

  listPodSandbox(filter?: { id?: string; state?: { state: string } | null; labelSelector?: Map_ } | null) {
    return [...this.sandboxes.values()]
      .filter(
        (s) =>
          (!filter?.id || s.id === filter.id) &&
          (!filter?.state || s.state === filter.state.state) &&
          matches(s.config.labels ?? {}, filter?.labelSelector),
      )
      .map((s) => this.sandboxEntry(s));
  }

  createContainer(podSandboxId: string, config: ContainerConfig): string {
    const s = this.sandbox(podSandboxId);
    if (s.state !== 'SANDBOX_READY')
      throw new FakeCriError(FAILED_PRECONDITION, `sandbox ${podSandboxId} is not ready`);
    const id = newId();
    const logPath =
      s.config.logDirectory && config.logPath ? join(s.config.logDirectory, config.logPath) : '';
    this.containers.set(id, {
      id,
      podSandboxId,
      config,
      state: 'CONTAINER_CREATED',
      createdAt: nowNs(),
      startedAt: '0',
      finishedAt: '0',
      exitCode: 0,
      reason: '',
      logPath,
    });
    return id;
  }

  startContainer(id: string): void {
    const c = this.container(id);
    if (c.state !== 'CONTAINER_CREATED')
      throw new FakeCriError(FAILED_PRECONDITION, `container ${id} is in state ${c.state}, not created`);
    c.state = 'CONTAINER_RUNNING';
    c.startedAt = nowNs();
    if (c.logPath) {
      // One line in the CRI log format, so `logs` has something to show.
      mkdirSync(dirname(c.logPath), { recursive: true });
      appendFileSync(
        c.logPath,
        `${new Date().toISOString()} stdout F fake-cri: ${c.config.metadata.name} running\n`,
      );
    }
  }

  private exit(c: Container, code: number, reason: string): void {
    if (c.state === 'CONTAINER_EXITED') return;
    c.state = 'CONTAINER_EXITED';
    c.exitCode = code;
    c.reason = reason;
    c.finishedAt = nowNs();
  }

  stopContainer(id: string): void {
    const c = this.containers.get(id);
    if (c) this.exit(c, 137, 'Error'); // killed by its stop signal, at once
  }

  removeContainer(id: string): void {
    this.containers.delete(id);
  }

  private containerEntry(c: Container) {
    return {
      id: c.id,
      podSandboxId: c.podSandboxId,
      metadata: c.config.metadata,
      image: { image: c.config.image.image, annotations: {} },
      imageRef: imageId(c.config.image.image),
      state: c.state,
      createdAt: c.createdAt,
      labels: c.config.labels ?? {},
      annotations: c.config.annotations ?? {},
    };
  }

  listContainers(
    filter?: {
      id?: string;
      state?: { state: string } | null;
      podSandboxId?: string;
      labelSelector?: Map_;
    } | null,
  ) {
    return [...this.containers.values()]
      .filter(
        (c) =>
          (!filter?.id || c.id === filter.id) &&
          (!filter?.podSandboxId || c.podSandboxId === filter.podSandboxId) &&
          (!filter?.state || c.state === filter.state.state) &&
          matches(c.config.labels ?? {}, filter?.labelSelector),
      )
      .map((c) => this.containerEntry(c));
  }

  containerStatus(id: string) {
    const c = this.container(id);
    const { podSandboxId: _, ...entry } = this.containerEntry(c);
    return {
      status: {
        ...entry,
        startedAt: c.startedAt,
        finishedAt: c.finishedAt,
        exitCode: c.exitCode,
        reason: c.reason,
        message: '',
        mounts: c.config.mounts ?? [],
        logPath: c.logPath,
      },
      info: {},
    };
  }

  execSync(id: string) {
    const c = this.container(id);
    if (c.state !== 'CONTAINER_RUNNING')
      throw new FakeCriError(FAILED_PRECONDITION, `container ${id} is not running`);
    return { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: 0 };
  }

  listContainerStats(filter?: { id?: string; podSandboxId?: string } | null) {
    const ts = nowNs();
    const u = (n: number) => ({ value: String(n) });
    return this.listContainers({ id: filter?.id ?? '', podSandboxId: filter?.podSandboxId ?? '' })
      .filter((c) => c.state === 'CONTAINER_RUNNING')
      .map((c) => ({
        attributes: { id: c.id, metadata: c.metadata, labels: c.labels, annotations: c.annotations },
        cpu: { timestamp: ts, usageCoreNanoSeconds: u(0), usageNanoCores: u(0) },
        memory: {
          timestamp: ts,
          workingSetBytes: u(1 << 20),
          availableBytes: u(0),
          usageBytes: u(1 << 20),
          rssBytes: u(1 << 20),
          pageFaults: u(0),
          majorPageFaults: u(0),
        },
        writableLayer: { timestamp: ts, fsId: { mountpoint: '/' }, usedBytes: u(0), inodesUsed: u(0) },
      }));
  }

  /** Every image is present: an image's status is made up from its reference. */
  image(ref: string) {
    return {
      id: imageId(ref),
      repoTags: [ref],
      repoDigests: [],
      size: '1048576',
      uid: null,
      username: '',
      spec: { image: ref, annotations: {} },
      pinned: false,
    };
  }

  listImages() {
    const refs = new Set([...this.containers.values()].map((c) => c.config.image.image));
    return [...refs].map((r) => this.image(r));
  }
}
