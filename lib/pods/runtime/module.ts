// The `runtime` module: the connection to the container runtime, supervised. It fails (and the
// supervisor retries it along the backoff curve) while the runtime does not answer, and keeps the
// pods' RuntimeReachable condition in step. KubeEdge's motivating case: the agent starting before
// containerd's socket exists must keep serving, not exit.
import { existsSync } from 'node:fs';
import type { CriClient } from '#lib/cri/client.ts';
import type { ModuleSpec } from '#lib/supervisor/modules.ts';
import type { RuntimeNetwork } from './network.ts';
import type { RuntimeReachability } from './reachability.ts';

export interface RuntimeModuleOptions {
  cri: CriClient;
  reach: RuntimeReachability;
  /** Called each time the runtime connects (the agent starts the pods module without waiting). */
  onConnected?: () => void;
  /** How long an existing socket gets to accept gRPC's connection; default 5 s. */
  connectTimeoutMs?: number;
  /** Health check period; default 5 s, two failures in a row restart the module. */
  healthIntervalMs?: number;
  /** Keeps the runtime's NetworkReady condition (RuntimeStatus), asked with each health check. */
  network?: RuntimeNetwork;
  /** Watches for a runtime while none answers (started on a failure, stopped once connected). */
  finder?: { start(): void; stop(): void };
}

/** Whether an error says the runtime does not answer (an expected state, reported once, not a crash). */
export function isRuntimeUnreachable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if ((err as { code?: unknown }).code === 503) return true;
  return /container runtime at \S+ (is unavailable|not reachable|is unreachable)/.test(err.message);
}

/** The socket path of a `unix://` endpoint, else undefined. */
export const unixSocketPath = (endpoint: string): string | undefined =>
  endpoint.startsWith('unix://') ? endpoint.slice('unix://'.length) : undefined;

/**
 * The runtime's version. A unix socket that does not exist fails at once; one that exists gets
 * `timeoutMs` for gRPC to connect, so a runtime that just appeared is found on this attempt even
 * while gRPC's own reconnect backoff (after earlier failures) has not retried yet.
 */
export async function connectRuntime(cri: CriClient, timeoutMs: number) {
  await connectChannel(cri, timeoutMs);
  return cri.version();
}

/** connectRuntime without the Version call: the connection only (the pods module's first pass needs no more). */
export async function connectChannel(cri: CriClient, timeoutMs: number): Promise<void> {
  const path = unixSocketPath(cri.endpoint);
  if (path !== undefined && !existsSync(path)) {
    throw new Error(`container runtime at ${cri.endpoint} is unavailable: connect ENOENT ${path}`);
  }
  await cri.ready(timeoutMs);
}

const untilAborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );

/** Asks the runtime for its NetworkReady condition; a runtime without RuntimeStatus leaves it unknown. */
async function refreshNetwork(o: RuntimeModuleOptions): Promise<void> {
  if (!o.network) return;
  const status = await o.cri.status().catch(() => undefined);
  if (status) o.network.update(status);
}

/** The supervised runtime connection (policy Always, the default backoff curve). */
export function runtimeModule(o: RuntimeModuleOptions): ModuleSpec {
  const { cri, reach } = o;
  return {
    name: 'runtime',
    policy: 'Always',
    quiet: isRuntimeUnreachable,
    health: {
      intervalMs: o.healthIntervalMs ?? 5_000,
      failureThreshold: 2,
      check: async () => {
        try {
          await cri.version();
          reach.up();
          await refreshNetwork(o);
        } catch (err) {
          reach.down(err);
          o.finder?.start();
          throw err;
        }
      },
    },
    run: async (ctx) => {
      let v: Awaited<ReturnType<CriClient['version']>>;
      try {
        v = await connectRuntime(cri, o.connectTimeoutMs ?? 5_000);
      } catch (err) {
        reach.down(err);
        o.finder?.start();
        throw err;
      }
      o.finder?.stop();
      reach.up();
      ctx.log.info(
        {
          endpoint: cri.endpoint,
          runtime: v.runtimeName,
          version: v.runtimeVersion,
          cri: v.runtimeApiVersion,
        },
        'container runtime connected',
      );
      await refreshNetwork(o);
      ctx.ready();
      o.onConnected?.();
      await untilAborted(ctx.signal);
    },
  };
}
