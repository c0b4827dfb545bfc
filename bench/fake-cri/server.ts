// Serves a FakeRuntime as CRI runtime.v1 (RuntimeService and ImageService, the subset in
// proto/cri that Outpost calls) on a unix socket.
import { statSync } from 'node:fs';
import {
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type sendUnaryData,
  status,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { fromJSON, type ServiceDefinition } from '@grpc/proto-loader';
import { descriptor } from '#lib/cri/proto.gen.ts';
import type { ContainerConfig, ContainerFilter, PodSandboxConfig, PodSandboxFilter } from '#lib/cri/types.ts';
import { prepareSocket } from '#lib/dmi/socket.ts';
import { FakeCriError, FakeRuntime } from './runtime.ts';

const defs = fromJSON(descriptor() as Parameters<typeof fromJSON>[0], {
  longs: String,
  enums: String,
  defaults: false,
  oneofs: true,
});

/** The request fields the handlers read (decoded with proto defaults off: unset ones are absent). */
interface Req {
  podSandboxId: string;
  containerId: string;
  runtimeHandler?: string;
  config: PodSandboxConfig & ContainerConfig;
  filter?: (PodSandboxFilter & ContainerFilter) | null;
  image?: { image: string } | null;
}
/** What a method answers; nothing means an empty message. */
type Handler = (req: Req) => unknown;

/** `unix:///run/x.sock` or `/run/x.sock` → `/run/x.sock`; anything else is refused. */
export function socketPath(listen: string): string {
  const path = listen.startsWith('unix://') ? listen.slice('unix://'.length) : listen;
  if (!path.startsWith('/')) throw new Error(`--listen ${listen}: expected unix:///ABSOLUTE/PATH`);
  return path;
}

function impl(rt: FakeRuntime, handlers: Record<string, Handler>): UntypedServiceImplementation {
  const out: UntypedServiceImplementation = {};
  for (const [method, fn] of Object.entries(handlers)) {
    out[method] = (call: ServerUnaryCall<Req, unknown>, cb: sendUnaryData<unknown>) => {
      rt.count(method);
      try {
        cb(null, fn(call.request) ?? {});
      } catch (err) {
        const code = err instanceof FakeCriError ? err.code : status.INTERNAL;
        cb({ code, details: (err as Error).message, name: 'Error', message: (err as Error).message });
      }
    };
  }
  return out;
}

function services(rt: FakeRuntime) {
  const runtime: Record<string, Handler> = {
    Version: () => rt.version(),
    Status: () => rt.status(),
    RunPodSandbox: (r) => ({ podSandboxId: rt.runPodSandbox(r.config, r.runtimeHandler) }),
    StopPodSandbox: (r) => rt.stopPodSandbox(r.podSandboxId),
    RemovePodSandbox: (r) => rt.removePodSandbox(r.podSandboxId),
    PodSandboxStatus: (r) => rt.podSandboxStatus(r.podSandboxId),
    ListPodSandbox: (r) => ({ items: rt.listPodSandbox(r.filter) }),
    CreateContainer: (r) => ({ containerId: rt.createContainer(r.podSandboxId, r.config) }),
    StartContainer: (r) => rt.startContainer(r.containerId),
    StopContainer: (r) => rt.stopContainer(r.containerId),
    RemoveContainer: (r) => rt.removeContainer(r.containerId),
    ReopenContainerLog: () => ({}),
    ListContainers: (r) => ({ containers: rt.listContainers(r.filter) }),
    ContainerStatus: (r) => rt.containerStatus(r.containerId),
    ExecSync: (r) => rt.execSync(r.containerId),
    // Streaming sessions need a stream server; the fake runtime has none.
    Exec: () => unimplemented('Exec'),
    Attach: () => unimplemented('Attach'),
    PortForward: () => unimplemented('PortForward'),
    ListContainerStats: (r) => ({ stats: rt.listContainerStats(r.filter) }),
  };
  const image: Record<string, Handler> = {
    ListImages: () => ({ images: rt.listImages() }),
    ImageStatus: (r) => ({ image: rt.image(r.image?.image ?? '') }),
    PullImage: (r) => ({ imageRef: rt.image(r.image?.image ?? '').id }),
  };
  return { runtime: impl(rt, runtime), image: impl(rt, image) };
}

function unimplemented(method: string): never {
  throw new FakeCriError(status.UNIMPLEMENTED, `fake-cri: ${method} is not implemented (no stream server)`);
}

export interface FakeCriServer {
  path: string;
  runtime: FakeRuntime;
  stop(): Promise<void>;
}

/**
 * Serves a fresh FakeRuntime on `listen`. Refuses a path that is not a socket, or a socket another
 * process answers on (a real containerd's, say); a stale socket file is replaced.
 */
export async function startFakeCri(listen: string): Promise<FakeCriServer> {
  const path = socketPath(listen);
  const st = statSync(path, { throwIfNoEntry: false });
  if (st && !st.isSocket())
    throw new Error(`fake-cri: ${path} exists and is not a socket; refusing to replace it`);
  await prepareSocket(path, 'fake-cri: runtime');
  const runtime = new FakeRuntime();
  const server = new Server();
  const s = services(runtime);
  server.addService(defs['runtime.v1.RuntimeService'] as ServiceDefinition, s.runtime);
  server.addService(defs['runtime.v1.ImageService'] as ServiceDefinition, s.image);
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${path}`, ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  return {
    path,
    runtime,
    stop: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  };
}
