import { statSync } from 'node:fs';
import type { Server, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { type DataDirLock, lockDataDir } from '#db/lock.ts';
import { type Metabase, openMetabase } from '#db/open.ts';
import { openCheckedMetabase } from '#db/recover.ts';
import {
  type AdminCredential,
  adminKubeconfigPath,
  ensureAdminCredential,
  writeAdminKubeconfig,
} from '#lib/auth/admin.ts';
import { loadSecurity } from '#lib/auth/load.ts';
import { ensureServingPki, type ServingPki, servingNames } from '#lib/auth/pki.ts';
import type { CloudContext } from '#lib/cloud/context.ts';
import type { NodeAgent } from '#lib/cloud/node-agent.ts';
import type { Dmi } from '#lib/dmi/module.ts';
import { MAX_SOCKET_PATH, socketPathTooLong } from '#lib/dmi/socket.ts';
import type { Deps } from '#lib/http/env.ts';
import { defaultLimits } from '#lib/http/limits.ts';
import type { ManifestSync } from '#lib/manifests/sync.ts';
import { mqttClientOptions } from '#lib/mqtt/options.ts';
import type { NodeApi } from '#lib/node-api/module.ts';
import type { PodModules } from '#lib/pods/modules.ts';
import { runtimeCandidates, socketExists } from '#lib/pods/runtime/discovery.ts';
import type { PodManager } from '#lib/pods/worker/manager.ts';
import { createStore, type Store } from '#lib/store/index.ts';
import { SnapshotSchedule } from '#lib/store/snapshots.ts';
import { ExitCode, FatalError } from '#lib/supervisor/exit-codes.ts';
import { type ModuleContext, Supervisor } from '#lib/supervisor/modules.ts';
import { createApp } from './app.ts';
import type { Clock } from './clock.ts';
import { systemClock } from './clock.ts';
import { ConfigError, parseListen, type ServeConfig } from './config.ts';
import type { Logger } from './log.ts';
import { createMetrics, type Metrics, timeMetabaseWrites } from './metrics.ts';
import { listen, listenLocal, type RunningServer } from './server.ts';
import { OUTPOST_VERSION } from './version.ts';

export interface Agent {
  /** http://, or https:// with --tls-cert. */
  url: string;
  /** https:// on the same port as `url`, with the data directory's serving certificate. */
  secureUrl: string | undefined;
  store: Store;
  metabase: Metabase;
  supervisor: Supervisor;
  pods: PodManager | undefined;
  /** The cloud link, with --cloud. */
  cloud: CloudContext | undefined;
  /** The node side of the cloud link, once the cloud module runs. */
  cloudNode: NodeAgent | undefined;
  /** Graceful stop: streams end, in-flight requests finish, modules stop, the metabase is closed. */
  close(): Promise<void>;
}

export interface AgentOptions {
  clock?: Clock;
  /** Called when a module fails fatally (the CLI exits with its code). */
  onFatal?: (err: FatalError) => void;
  /** Run pods on the runtime (default true; the read-only API runs without). */
  runPods?: boolean;
  /** Endpoints watched for a runtime while none answers (default: runtimeCandidates()). */
  runtimeCandidates?: string[];
  /** How long the runtime may be unreachable before pods show Ready=False (default 40 s). */
  runtimeUnreachableGraceMs?: number;
  /**
   * Called once, when the code a start runs has run: every part loaded and the first request
   * answered; else a minute after every part loaded (a board power-cycled before anyone asks
   * still gets a cache for its next recovery), or the agent closing before that. The serve script
   * writes its code cache then.
   */
  onWarm?: () => void;
  /** How long after every part loaded `onWarm` waits for a first request (default a minute). */
  warmWithoutRequestMs?: number;
}

const untilAborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );

/** What a start has opened so far: a start that fails closes these, a graceful stop all of them. */
interface Opened {
  /** Lets the requests that wait for every part go on (to their end, when the start failed). */
  unblock?: () => void;
  shutdown?: AbortController;
  tokens?: { close(): void } | undefined;
  cloud?: CloudContext | undefined;
  lock?: DataDirLock | undefined;
  metabase?: Metabase;
  supervisor?: Supervisor;
  server?: RunningServer;
  podSide?: PodModules;
  localServer?: { close(): Promise<void> } | undefined;
  dmi?: Dmi;
  nodeApi?: NodeApi;
  metrics?: Metrics;
}

/**
 * Closes what a start opened: the servers first (no request meets a half-stopped agent), then the
 * modules, the runtime client, the cloud link, the metabase and last the data directory's lock.
 * Every step runs even when one fails; the first failure is thrown at the end.
 */
async function closeOpened(o: Opened): Promise<void> {
  let failure: { err: unknown } | undefined;
  const step = async (close: () => unknown) => {
    try {
      await close();
    } catch (err) {
      failure ??= { err };
    }
  };
  o.unblock?.();
  o.shutdown?.abort();
  await step(() => o.podSide?.stopWatching());
  await step(() => o.tokens?.close());
  await step(() => o.server?.close());
  await step(() => o.localServer?.close());
  await step(() => o.nodeApi?.close());
  // The DMI socket bound at start, when no module run has taken it over yet.
  await step(() => o.dmi?.close());
  await step(() => o.supervisor?.stop());
  await step(() => o.podSide?.close());
  await step(() => o.cloud?.close());
  await step(() => o.metabase?.close());
  await step(() => o.metrics?.close());
  await step(() => o.lock?.release());
  if (failure) throw failure.err;
}

/**
 * Starts Outpost's node agent in the order that gets a board serving and its pods back soonest:
 * the metabase and the local API first (cached reads are answered at once, whatever else is
 * down), then the runtime and pods modules (recovery talks to CRI), then everything else (devices,
 * MQTT, manifests, the cloud link). Each part's code is imported when its turn comes; requests
 * other than cached reads wait until every part is there. A start that fails closes what it had
 * opened (the API's port, the sockets, the metabase, the data directory's lock) before it throws.
 */
export async function startAgent(config: ServeConfig, log: Logger, opts: AgentOptions = {}): Promise<Agent> {
  const opened: Opened = {};
  try {
    return await start(config, log, opts, opened);
  } catch (e) {
    await closeOpened(opened).catch((err: unknown) =>
      log.warn({ err }, 'closing what a failed start had opened failed'),
    );
    throw e;
  }
}

async function start(config: ServeConfig, log: Logger, opts: AgentOptions, opened: Opened): Promise<Agent> {
  const clock = opts.clock ?? systemClock;
  const now = () => clock.now();
  const started = now();
  // Milliseconds since the process started, at each step: the `outpost started` log line.
  const marks: Record<string, number> = {};
  const mark = (step: string) => {
    marks[step] = Math.round(process.uptime() * 1000);
  };
  mark('agent');
  const { host, port } = parseListen(config.listen);
  if (config.manifests) {
    try {
      if (!statSync(config.manifests).isDirectory()) throw new Error('not a directory');
    } catch (e) {
      throw new ConfigError(`--manifests ${config.manifests}: ${(e as Error).message}`);
    }
  }
  const security = loadSecurity(config, host, log);
  opened.tokens = security.auth.tokens;
  // Checked before anything runs: a bad --mqtt-* flag is a configuration error.
  const mqttOptions = config.mqtt ? mqttClientOptions(config) : undefined;
  let cloud: CloudContext | undefined;
  if (config.cloud) {
    // Loaded only with --cloud: a standalone node does not evaluate the cloud link's modules.
    const { createCloudContext } = await import('#lib/cloud/context.ts');
    const { readKubeconfig } = await import('#lib/cloud/kubeconfig.ts');
    try {
      cloud = await createCloudContext({
        kubeConfig: readKubeconfig(config.cloud),
        nodeName: config.nodeName,
        clock,
        log: log.child({ module: 'cloud' }),
      });
    } catch (e) {
      // The reader's messages name the file: `kubeconfig /etc/outpost/kc: context "x" not found`.
      throw new ConfigError(`--cloud: ${(e as Error).message}`);
    }
    opened.cloud = cloud;
  }
  // One agent per data directory, checked before anything in it is opened.
  opened.lock = config.dataDir === ':memory:' ? undefined : lockDataDir(config.dataDir);
  // A quick_check first: a damaged file is moved aside and replaced (db/recover.ts).
  const metabase =
    config.dataDir === ':memory:'
      ? openMetabase(config.dataDir, { durability: config.durability })
      : openCheckedMetabase(config.dataDir, {
          durability: config.durability,
          keep: config.snapshotKeep,
          now,
          onSnapshotError: (err) => log.warn({ err }, 'metabase snapshot before the migration failed'),
        });
  opened.metabase = metabase;
  mark('metabase');
  // The data directory's admin credential (made on the first start) is always accepted.
  let admin: AdminCredential;
  try {
    admin = ensureAdminCredential(config.dataDir);
  } catch (e) {
    throw new FatalError(
      ExitCode.DataDir,
      `--data-dir ${config.dataDir}: admin credential: ${(e as Error).message}`,
    );
  }
  security.auth.admin = admin.hash;
  security.auth.adminKubeconfig =
    config.dataDir === ':memory:' ? undefined : adminKubeconfigPath(config.dataDir);
  // Without --tls-cert, the data directory's own CA and serving certificate: HTTPS on the same
  // port as HTTP, so the admin kubeconfig's token travels over TLS (kubectl sends it no other way).
  // Read (or made) on the first TLS connection or when the admin kubeconfig is written, whichever
  // comes first, so not before the first cached read (X.509 parsing and checks: ~5 ms of CPU).
  let pki: ServingPki | undefined;
  let pkiTried = !!security.tls;
  const servingPki = (): ServingPki | undefined => {
    if (pkiTried) return pki;
    pkiTried = true;
    try {
      pki = ensureServingPki(config.dataDir, servingNames(host, config.nodeIp), now());
    } catch (err) {
      log.warn(
        { err },
        'no serving certificate could be made in the data directory: plain HTTP only (admin work through the unix socket or the admin token)',
      );
    }
    return pki;
  };
  mark('credentials');
  const store = createStore(metabase, { host: config.nodeName, now });
  // Before any module writes: from now on every status and event also goes to the cloud outbox.
  if (cloud) (await import('#lib/cloud/pods-module.ts')).enableOutbox(cloud, store);
  const shutdown = new AbortController();
  opened.shutdown = shutdown;
  const supervisor = new Supervisor({
    log,
    clock,
    onFatal: (err) => (opts.onFatal ? opts.onFatal(err) : log.error({ err }, 'fatal module failure')),
  });
  opened.supervisor = supervisor;
  const metrics = createMetrics({
    pods: () => store.pods.list().items,
    diskFull: () => store.disk.full !== undefined,
    ...(cloud
      ? {
          cloud: () => {
            const s = cloud.link.snapshot();
            return { online: s.state === 'online', lastContact: s.lastContact, outbox: cloud.outboxStats() };
          },
        }
      : {}),
  });
  opened.metrics = metrics;
  let recoveredLogged = false;
  supervisor.on('change', (m) => {
    metrics.module(m);
    if (m.name === 'pods' && m.state === 'running' && !recoveredLogged) {
      recoveredLogged = true;
      mark('podsRecovered');
      log.info({ sinceProcessStartMs: marks }, 'pods recovered: every pod had its first pass');
    }
  });
  if (metabase.recovery) {
    const r = metabase.recovery;
    const how = r.snapshot
      ? `restored the snapshot ${r.snapshot.path} of ${new Date(r.snapshot.takenAt).toISOString()}`
      : 'no snapshot verified: rebuilt from the manifests, the cloud and the runtime';
    const message =
      `the metabase file was damaged (${r.problems[0] ?? 'corrupt'}); moved it to ${r.movedTo} and ${how}. ` +
      `Running pods are adopted. Not recovered: ${r.lost}`;
    log.error({ problems: r.problems, movedTo: r.movedTo, snapshot: r.snapshot?.path }, message);
    metrics.metabaseRecovery(r.snapshot ? 'snapshot' : 'rebuilt');
    try {
      store.events.record(
        { kind: 'Node', namespace: 'default', name: config.nodeName, uid: config.nodeName },
        'Warning',
        'MetabaseRecovered',
        message,
      );
    } catch (err) {
      // A full disk must not stop a start that recovered: the log line and /readyz say it anyway.
      if (!store.disk.noteError(err)) throw err;
    }
  }
  timeMetabaseWrites(metabase.sqlite, (seconds) => metrics.metabaseWrite(seconds));
  // The parts loaded after the API listens fill in their dependencies (runtime, devices, MQTT);
  // until then only cached reads are served (lib/app.ts), the other requests wait for `starting`.
  let started2: () => void = () => {};
  const deps: Deps = {
    store,
    log,
    now,
    nodeName: config.nodeName,
    nodeIp: config.nodeIp,
    shutdown: shutdown.signal,
    // Ready only once every part has loaded and registered its modules (each then says its own).
    health: () =>
      deps.starting
        ? [
            ...supervisor.snapshot(),
            { name: 'startup', state: 'starting', critical: false, restarts: 0, since: started },
          ]
        : supervisor.snapshot(),
    metrics,
    cloud,
    auth: security.auth,
    limits: defaultLimits(now, {
      exec: config.maxExecSessions,
      logs: config.maxLogStreams,
      rate: config.rateLimit,
      maxBodyBytes: config.maxBodyBytes,
    }),
    starting: new Promise<void>((resolve) => {
      started2 = resolve;
    }),
  };
  opened.unblock = () => started2();
  // Registered before the API listens, so /readyz fails until each has started; the code of the
  // modules that need more than the metabase is imported when they run.
  supervisor.register({
    name: 'api',
    policy: 'Never',
    critical: true,
    run: async (ctx) => {
      ctx.ready();
      await untilAborted(ctx.signal);
    },
  });
  supervisor.register({
    name: 'metabase',
    policy: 'Always',
    critical: true,
    health: {
      intervalMs: 10_000,
      failureThreshold: 3,
      check: () => void metabase.sqlite.prepare('SELECT 1').get(),
    },
    run: async (ctx) => {
      ctx.ready();
      await untilAborted(ctx.signal);
    },
  });

  // The API listens before anything else runs, so cached reads never wait for the runtime.
  const app = createApp(deps); // outside the try: a failure here is a bug, not a listen failure
  let server: RunningServer;
  try {
    server = security.tls
      ? await listen(app, host, port, security.tls)
      : await listen(app, host, port, servingPki, { sniff: true });
  } catch (e) {
    // Not a configuration exit: the port may be free again on the next try (outpost supervise).
    throw new FatalError(ExitCode.ListenFailed, `--listen ${config.listen}: ${(e as Error).message}`);
  }
  opened.server = server;
  mark('listening');
  const answered = opts.onWarm ? firstAnswerOr(server, Number.POSITIVE_INFINITY) : undefined;
  log.info(
    {
      version: OUTPOST_VERSION,
      url: server.url,
      dataDir: config.dataDir,
      node: config.nodeName,
      startupMs: now() - started,
      sinceProcessStartMs: marks.listening,
    },
    'outpost serving',
  );
  supervisor.start();

  // Pods next: the runtime and pods modules start talking to CRI as soon as their code is loaded.
  // With no runtime socket there is nothing to recover yet: the API answers its first request
  // (or 100 ms pass) before the pod side's code (gRPC, CRI) takes the CPU to compile.
  let podSide: PodModules | undefined;
  // The manifests directory's objects, synced into the metabase when the module starts.
  let manifests: ManifestSync | undefined;
  let manifestsRegistered = false;
  const registerManifests = async () => {
    const dir = config.manifests!;
    const { ManifestSync } = await import('#lib/manifests/sync.ts');
    manifestsRegistered = true;
    supervisor.register({
      name: 'manifests',
      policy: 'Always',
      run: async (ctx: ModuleContext) => {
        manifests = new ManifestSync({
          dir,
          nodeName: config.nodeName,
          store,
          log: log.child({ module: 'manifests' }),
          // With a runtime, a pod whose manifest is gone terminates gracefully; without, it just goes.
          ...(opts.runPods !== false
            ? { removePod: (ns: string, name: string) => store.pods.markDeleting(ns, name) }
            : {}),
        });
        await manifests.sync();
        manifests.watch((err) => ctx.fail(err));
        ctx.ready();
        await untilAborted(ctx.signal);
        manifests.close();
      },
    });
  };
  const candidates = opts.runtimeCandidates ?? runtimeCandidates(config.runtimeEndpoint);
  if (opts.runPods !== false) {
    if (!candidates.some(socketExists)) await firstAnswerOr(server, 100);
    const [{ podModules }] = await Promise.all([
      import('#lib/pods/modules.ts'),
      // Registered first (its run syncs the directory at once), so the manifests' pods are in the
      // metabase when the pods module makes its first pass, which /readyz waits for.
      config.manifests ? registerManifests() : undefined,
    ]);
    mark('podsLoaded');
    podSide = podModules({
      store,
      log,
      clock,
      nodeName: config.nodeName,
      hostIP: config.nodeIp,
      dataDir: config.dataDir,
      runtimeEndpoint: config.runtimeEndpoint,
      imagePull: config.imagePull,
      containerLog: {
        maxSize: config.containerLogMaxSize,
        maxFiles: config.containerLogMaxFiles,
        monitorIntervalMs: config.containerLogMonitorInterval,
      },
      runtimeCandidates: candidates,
      runtimeUnreachableGraceMs: opts.runtimeUnreachableGraceMs,
      onCriCall: (method, code, seconds) => {
        metrics.cri(method, code, seconds);
        // When recovery first reached the runtime: the call's start, for the `pods recovered` line.
        const at = Math.round(process.uptime() * 1000 - seconds * 1000);
        marks.firstCriCall ??= at;
        if (method === 'RunPodSandbox') marks.firstRunPodSandbox ??= at;
      },
      retryNow: (module) => supervisor.retryNow(module),
    });
    opened.podSide = podSide;
    for (const m of podSide.modules) supervisor.register(m);
    deps.cri = podSide.cri;
    deps.runtimeNetwork = () => podSide!.network.state;
    deps.restarts = podSide.restarts;
    deps.stats = podSide.stats;
  }
  const refreshPods = () => podSide?.refreshAll();

  // The admin kubeconfig names the address the API answers on; local admin work also goes
  // through the root-only unix socket beside the metabase.
  const secureUrl = servingPki() ? server.secureUrl : undefined;
  try {
    writeAdminKubeconfig(config.dataDir, adminServer(secureUrl ?? server.url), admin.token, pki?.caPem);
  } catch (err) {
    // A full disk at start must not stop the agent (reads and recovery go on): the kubeconfig of
    // an earlier start stays, with the token that still authenticates.
    log.warn({ err }, 'the admin kubeconfig could not be rewritten; the one already there stays');
  }
  // Too long a data directory: the agent runs without the socket (the CLI then uses the kubeconfig).
  if (config.dataDir !== ':memory:') {
    const path = join(config.dataDir, 'outpost.sock');
    const tooLong = socketPathTooLong(path);
    try {
      if (tooLong) throw new Error(`the local admin socket ${tooLong}`);
      opened.localServer = await listenLocal(app, path);
    } catch (e) {
      log.warn(
        { err: e, path, ...(tooLong ? { bytes: Buffer.byteLength(path), max: MAX_SOCKET_PATH } : {}) },
        'the local admin socket could not be opened; the admin kubeconfig still works',
      );
    }
  }

  // Devices: the DMI server for mappers, the registry reloaded from the metabase, pushes to mappers.
  const { Dmi, dmiSocketPath } = await import('#lib/dmi/module.ts');
  const dmi = new Dmi({ store, log: log.child({ module: 'dmi' }), socket: dmiSocketPath(config), clock });
  const dmiTooLong = socketPathTooLong(dmi.socket);
  if (dmiTooLong)
    throw new ConfigError(
      `--dmi-socket: the DMI socket ${dmiTooLong}; give a shorter --dmi-socket or --data-dir`,
    );
  // Bound now, as the API's port is: a socket that cannot be bound (its directory a file, another
  // live process serving it) fails the start with its path, not a module that retries forever.
  try {
    await dmi.listen();
  } catch (e) {
    throw new FatalError(ExitCode.ListenFailed, `--dmi-socket ${dmi.socket}: ${(e as Error).message}`);
  }
  opened.dmi = dmi;
  deps.dmi = dmi.manager;
  supervisor.register({ name: 'dmi', policy: 'Always', run: (ctx) => dmi.run(ctx) });
  // The LAN's view over MQTT: EventBus twin topics and Home Assistant discovery (off by default).
  if (config.mqtt && mqttOptions) {
    const [{ MqttBridge }, { restartPod }] = await Promise.all([
      import('#lib/mqtt/bridge.ts'),
      import('#lib/pods/worker/restart.ts'),
    ]);
    const mqtt = new MqttBridge({
      url: config.mqtt,
      client: mqttOptions,
      node: config.nodeName,
      topicPrefix: config.mqttTopicPrefix,
      discoveryPrefix: config.mqttDiscoveryPrefix,
      version: OUTPOST_VERSION,
      store,
      editDevice: (ns, name, change) => dmi.manager.editDevice(ns, name, change),
      restartPod: (ns, name) => restartPod(deps, ns, name),
      log: log.child({ module: 'mqtt' }),
      now,
    });
    deps.mqtt = () => mqtt.status();
    supervisor.register({ name: 'mqtt', policy: 'Always', run: (ctx) => mqtt.run(ctx) });
  }
  if (config.manifests && !manifestsRegistered) await registerManifests();
  let cloudNode: NodeAgent | undefined;
  // The node API (kubelet's port) the API server calls for logs, exec, port-forward and stats.
  let nodeApi: NodeApi | undefined;
  if (cloud) {
    // Loaded only with --cloud, as the rest of the cloud link.
    const { startNodeApi } = await import('#lib/node-api/module.ts');
    try {
      nodeApi = await startNodeApi({
        deps,
        ctx: cloud,
        port: config.kubeletPort,
        nodeIP: config.nodeIp,
        dataDir: config.dataDir,
      });
    } catch (e) {
      throw new FatalError(
        ExitCode.ListenFailed,
        `--kubelet-port ${config.kubeletPort}: ${(e as Error).message}`,
      );
    }
    opened.nodeApi = nodeApi;
    const running = nodeApi;
    supervisor.register({
      name: 'node-api',
      policy: 'Always',
      run: async (ctx) => {
        ctx.ready();
        await running.run(ctx.signal);
      },
    });
    const { cloudModule } = await import('#lib/cloud/module.ts');
    const runtimeModuleRunning = () => supervisor.snapshot().find((m) => m.name === 'runtime');
    const cri = podSide?.cri;
    supervisor.register(
      cloudModule({
        ctx: cloud,
        kubeconfigPath: config.cloud,
        dataDir: config.dataDir,
        port: nodeApi?.port ?? Number(new URL(server.url).port),
        nodeIP: nodeApi?.nodeIP,
        leaseDurationMs: config.nodeLeaseDuration,
        statusReportMs: config.nodeStatusReportFrequency,
        onNode: (n) => {
          cloudNode = n;
        },
        metabaseFull: () => {
          const full = store.disk.full;
          return full ? { dataDir: store.disk.dataDir, free: full.free } : undefined;
        },
        runtime: async () => {
          if (!cri) return { ready: true, version: '' };
          const m = runtimeModuleRunning();
          if (m?.state !== 'running')
            return { ready: false, message: m?.lastError ?? 'not connected', version: '' };
          const v = await cri.version();
          return { ready: true, version: `${v.runtimeName}://${v.runtimeVersion}` };
        },
      }),
    );
    // Pods bound to the node, the objects they use, and the outbox back to the cloud.
    const { cloudPodsModule } = await import('#lib/cloud/pods-module.ts');
    supervisor.register(cloudPodsModule(cloud, store));
    // KubeEdge devices bound to the node, when the cluster has the CRDs and lets the node read them.
    const { cloudDevicesModule } = await import('#lib/cloud/devices-module.ts');
    supervisor.register(cloudDevicesModule(cloud, store));
  }
  // Every dependency is there: the requests that waited go on.
  delete deps.starting;
  started2();
  const snapshots =
    config.dataDir !== ':memory:' && config.snapshotInterval > 0
      ? new SnapshotSchedule({
          store,
          dataDir: config.dataDir,
          intervalMs: config.snapshotInterval,
          keep: config.snapshotKeep,
          clock,
          log: log.child({ module: 'metabase' }),
          onResult: (result, at) => metrics.snapshot(result, at),
        })
      : undefined;
  snapshots?.start();
  // Out of space: writes answer 503 and the Node shows DiskPressure until a probe write commits
  // again (every 2 s); then every pod's status is written anew (writes may have been dropped).
  let probeTimer: ReturnType<Clock['setTimeout']> | undefined;
  const probe = () => {
    probeTimer = undefined;
    let full = true;
    try {
      full = store.disk.probe();
    } catch (err) {
      log.warn({ err }, 'disk probe write failed');
    }
    if (full && !shutdown.signal.aborted) probeTimer = clock.setTimeout(probe, 2_000);
  };
  store.disk.onChange((full) => {
    cloudNode?.poke();
    if (full) {
      log.error(
        { dataDir: store.disk.dataDir, freeBytes: full.free, err: full.error },
        `no space left in the data directory ${store.disk.dataDir}: metabase writes fail (503), reads go on; ` +
          'DiskPressure until space is freed',
      );
      probeTimer ??= clock.setTimeout(probe, 2_000);
      return;
    }
    log.info({ dataDir: store.disk.dataDir }, 'space is back in the data directory: metabase writes resume');
    refreshPods();
  });
  mark('started');
  log.info({ sinceProcessStartMs: marks }, 'outpost started: every module loaded');
  let warmed = !opts.onWarm;
  const warm = () => {
    if (warmed) return;
    warmed = true;
    opts.onWarm!();
  };
  // After the answer's own callbacks, off its path.
  answered?.then(() => setImmediate(warm));
  const warmLater =
    opts.onWarm && !warmed ? setTimeout(warm, opts.warmWithoutRequestMs ?? 60_000) : undefined;
  warmLater?.unref();
  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    secureUrl,
    store,
    metabase,
    supervisor,
    get pods() {
      return podSide?.pods;
    },
    cloud,
    get cloudNode() {
      return cloudNode;
    },
    close() {
      closing ??= (async () => {
        clearTimeout(warmLater);
        warm();
        shutdown.abort();
        snapshots?.stop();
        if (probeTimer) clock.clearTimeout(probeTimer);
        await closeOpened(opened);
        log.info({}, 'outpost stopped');
      })();
      return closing;
    },
  };
}

export { ExitCode, FatalError };

/** Resolves once the server has answered a request, or after `ms` (never when infinite). */
function firstAnswerOr(server: RunningServer, ms: number): Promise<void> {
  const http = server.server as unknown as Server;
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      http.off('request', onRequest);
      resolve();
    };
    const onRequest = (_req: unknown, res: ServerResponse) => res.once('finish', done);
    const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
    http.on('request', onRequest);
  });
}

/** The URL a local client reaches the API at: a wildcard listen address is reached on loopback. */
function adminServer(url: string): string {
  const u = new URL(url);
  if (u.hostname === '0.0.0.0') u.hostname = '127.0.0.1';
  if (u.hostname === '[::]') u.hostname = '[::1]';
  return u.origin;
}
