// The agent's pod side: the CRI client, the runtime module (connection, health, finding a runtime
// that is not there yet) and the pods module (recovery at start, then the pod lifecycle and log
// rotation). lib/agent.ts imports this right after the API listens, so cached reads never wait for
// gRPC and the pod machinery to load, and pods are recovered as soon as they have loaded.
import type { Clock } from '#lib/clock.ts';
import { sleep } from '#lib/clock.ts';
import { CriClient } from '#lib/cri/client.ts';
import type { Logger } from '#lib/log.ts';
import type { Store } from '#lib/store/index.ts';
import type { ModuleSpec } from '#lib/supervisor/modules.ts';
import { ContainerLogRotator } from './logs/rotate.ts';
import { ProbeManager } from './probes/index.ts';
import { ABORTED, untilAborted } from './probes/run.ts';
import { RuntimeFinder, runtimeCandidates } from './runtime/discovery.ts';
import { connectChannel, isRuntimeUnreachable, runtimeModule } from './runtime/module.ts';
import { RuntimeNetwork } from './runtime/network.ts';
import { RuntimeReachability } from './runtime/reachability.ts';
import { StatsCollector } from './runtime/stats.ts';
import type { ImagePullMode } from './worker/images.ts';
import { PodManager } from './worker/manager.ts';
import { RestartRequests } from './worker/restart-requests.ts';

export interface PodModulesOptions {
  store: Store;
  log: Logger;
  clock: Clock;
  nodeName: string;
  /** The node's IP for pods' status.hostIP (--node-ip; default: the manager's own choice). */
  hostIP?: string | undefined;
  dataDir: string;
  runtimeEndpoint: string;
  imagePull: ImagePullMode;
  containerLog: { maxSize: number; maxFiles: number; monitorIntervalMs: number };
  /** Endpoints watched for a runtime while none answers (default: runtimeCandidates()). */
  runtimeCandidates?: string[] | undefined;
  /** How long the runtime may be unreachable before pods show Ready=False (default 40 s). */
  runtimeUnreachableGraceMs?: number | undefined;
  /** One CRI call's outcome, for the metrics. */
  onCriCall(method: string, code: string, seconds: number): void;
  /** Restarts a module's backoff at once (the runtime answers: connect and recover now). */
  retryNow(module: 'runtime' | 'pods'): void;
}

export interface PodModules {
  cri: CriClient;
  network: RuntimeNetwork;
  restarts: RestartRequests;
  stats: StatsCollector;
  /** The runtime and pods modules, in that order, for the supervisor. */
  modules: ModuleSpec[];
  /** The running pod manager, between the pods module's start and stop. */
  readonly pods: PodManager | undefined;
  /** Every pod of the node is looked at again (its status may be stale). */
  refreshAll(): void;
  /** Stops watching for a runtime (before the modules stop). */
  stopWatching(): void;
  /** Closes the CRI connection (after the modules stopped). */
  close(): void;
}

/** Builds the pod side of the agent; nothing runs until the supervisor starts the modules. */
export function podModules(o: PodModulesOptions): PodModules {
  const { store, log, clock, nodeName } = o;
  const now = () => clock.now();
  const cri = new CriClient({
    endpoint: o.runtimeEndpoint,
    logger: log.child({ module: 'cri' }),
    onCall: o.onCriCall,
    // While the runtime is down gRPC retries the socket every second (a cheap connect()).
    channelOptions: {
      'grpc.initial_reconnect_backoff_ms': 1_000,
      'grpc.max_reconnect_backoff_ms': 1_000,
    },
  });
  // The runtime's NetworkReady, kept by the runtime module's health check.
  const network = new RuntimeNetwork();
  const restarts = new RestartRequests(now);
  let pods: PodManager | undefined;
  const refreshAll = () => {
    for (const rec of store.pods.records({ nodeName })) pods?.refresh(rec.uid);
  };
  // Pods are served from the metabase whatever the runtime does; their RuntimeReachable
  // condition says whether what they show is live. Once the runtime answers, the pods module
  // starts at once instead of waiting out its own backoff.
  const candidates = o.runtimeCandidates ?? runtimeCandidates(o.runtimeEndpoint);
  const reach = new RuntimeReachability({
    store,
    nodeName,
    endpoint: () => cri.endpoint,
    watching: candidates,
    now,
    log,
    clock,
    ...(o.runtimeUnreachableGraceMs !== undefined ? { unreachableGraceMs: o.runtimeUnreachableGraceMs } : {}),
    onRecovered: refreshAll,
  });
  // While no runtime answers, the candidate sockets are polled; the first to answer is used.
  const finder = new RuntimeFinder({
    candidates,
    clock,
    answers: async (endpoint) => {
      const probe = new CriClient({ endpoint, timeoutMs: 2_000 });
      try {
        await probe.version();
        return true;
      } finally {
        probe.close();
      }
    },
    found: (endpoint) => {
      if (endpoint !== cri.endpoint) {
        log.info({ endpoint, configured: o.runtimeEndpoint }, 'container runtime found');
        cri.retarget(endpoint);
      }
      o.retryNow('runtime');
    },
  });
  // kubelet's container log manager: one pass per monitor interval while the pods module runs.
  const rotator = new ContainerLogRotator({
    cri,
    policy: { maxSize: o.containerLog.maxSize, maxFiles: o.containerLog.maxFiles },
    log: log.child({ module: 'logs' }),
    owns: (uid) => store.pods.recordByUid(uid) !== undefined,
    now,
  });
  const rotateLogs = async (signal: AbortSignal) => {
    while (!signal.aborted) {
      await sleep(o.containerLog.monitorIntervalMs, signal);
      if (!signal.aborted)
        await rotator.pass(signal).catch((err) => log.debug({ err }, 'container log rotation pass failed'));
    }
  };
  const podsModule: ModuleSpec = {
    name: 'pods',
    policy: 'Always',
    quiet: isRuntimeUnreachable,
    run: async (ctx) => {
      const prober = new ProbeManager({
        clock,
        exec: (id, cmd, timeout) => cri.execSync(id, cmd, timeout, ctx.signal),
        onChange: (uid) => pods?.refresh(uid),
        onLivenessFailure: (uid, _name, containerId, _output, probe) => {
          pods?.worker.condemn(containerId, probe);
          void pods?.enqueue(uid);
        },
        onEvent: (uid, type, reason, message, container) => {
          const rec = store.pods.recordByUid(uid);
          if (rec)
            store.events.record(
              {
                kind: 'Pod',
                namespace: rec.namespace,
                name: rec.name,
                uid,
                ...(container ? { fieldPath: `spec.containers{${container}}` } : {}),
              },
              type,
              reason,
              message,
              'kubelet',
            );
        },
      });
      const manager = new PodManager({
        cri,
        store,
        clock,
        prober,
        log: log.child({ module: 'pods' }),
        nodeName,
        hostIP: o.hostIP,
        dataDir: o.dataDir,
        restarts,
        imagePull: o.imagePull,
        // An abort cancels the passes' runtime calls in flight (an image pull, a long grace period),
        // so the run returns promptly instead of being abandoned after the supervisor's settle timeout.
        signal: ctx.signal,
      });
      // Probe callbacks may fire during the first syncs: the manager must be reachable before start().
      pods = manager;
      try {
        // While the runtime is absent this fails at once with a clear reason (no socket). The runtime
        // module asks for the version; the first pass lists the runtime as soon as it is connected.
        await connectChannel(cri, 5_000);
        // Recovery (every pod's first pass) may take long; an abort meanwhile stops at once: the
        // manager's stop() below lets the passes in flight end and starts no other.
        if ((await untilAborted(manager.start(), ctx.signal)) === ABORTED) return;
        ctx.ready();
        await rotateLogs(ctx.signal);
      } finally {
        await manager.stop();
        prober.stopAll();
        if (pods === manager) pods = undefined;
      }
    },
  };
  return {
    cri,
    network,
    restarts,
    stats: new StatsCollector(cri, nodeName, now),
    modules: [
      runtimeModule({ cri, reach, finder, network, onConnected: () => o.retryNow('pods') }),
      podsModule,
    ],
    get pods() {
      return pods;
    },
    refreshAll,
    stopWatching() {
      finder.close();
      reach.close();
    },
    close() {
      cri.close();
    },
  };
}
