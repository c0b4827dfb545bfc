import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import type { Clock, Timer } from '#lib/clock.ts';
import type { CriClient } from '#lib/cri/client.ts';
import type { Container as CriContainer, Image, PodSandbox, PodSandboxConfig } from '#lib/cri/types.ts';
import type { Container, Pod, PodStatus } from '#lib/kube/types.ts';
import type { Logger } from '#lib/log.ts';
import type { Store } from '#lib/store/index.ts';
import { GONE, type PodRecord } from '#lib/store/pods.ts';
import {
  CONTAINER_KIND,
  CONTAINER_RESTART_COUNT,
  MANAGED_BY,
  POD_UID,
  SPEC_HASH,
} from '../runtime/labels.ts';
import { type ContainerView, computeStatus, type Waiting } from '../runtime/status.ts';
import { instances, nanosToMs, newestFirst, type RuntimePod, StatusCache } from '../runtime/view.ts';
import { buildContainerConfig, podSpecHash } from '../spec/container-config.ts';
import { ContainerConfigError, resolveEnv } from '../spec/env.ts';
import { cleanupVolumes, prepareVolumes } from '../spec/volumes.ts';
import { CrashBackoff } from './crash-backoff.ts';
import { ImageError, type ImagePuller } from './images.ts';
import type { RestartRequests } from './restart-requests.ts';
import { buildSandboxConfig, isHostNetwork } from './sandbox.ts';
import { Semaphore } from './semaphore.ts';
import type { WriteBatch } from './write-batch.ts';

/** What the probe manager tells the pod worker. */
export interface Prober {
  ready(uid: string, name: string): boolean;
  started(uid: string, name: string): boolean;
  sync(
    pod: Pod,
    containers: { name: string; containerId: string; running: boolean; startedAt: number }[],
  ): void;
  stopPod(uid: string): void;
}

export interface WorkerDeps {
  cri: CriClient;
  store: Store;
  log: Logger;
  clock: Clock;
  images: ImagePuller;
  prober: Prober;
  nodeName: string;
  hostIP: string;
  dataDir: string;
  /** This metabase's identity, stamped on everything Outpost creates (see gc.ts). */
  managedBy: string;
  /** Asks for another sync of the pod at a later time (a backoff ending). */
  wakeAt(uid: string, at: number): void;
  /** Containers stopped by a restart request: started again at once, whatever the policy and back-off. */
  restarts?: RestartRequests | undefined;
  /** Where status and event writes go, so that a burst of them costs one commit. */
  writes: WriteBatch;
  /**
   * Aborts when the agent stops: cancels the pass's runtime calls in flight (an image pull, a stop
   * waiting out a grace period), so no pod holds the shutdown. A cancelled call ends the pass with
   * its error, never as the container's failure: no waiting reason, no Failed event, no status.
   */
  signal?: AbortSignal | undefined;
}

type Event = (type: 'Normal' | 'Warning', reason: string, message: string, container?: string) => void;

/** Drives one pod towards its spec, kubelet-style: sandbox, init containers in order, containers, status. */
export class PodWorker {
  readonly #d: WorkerDeps;
  readonly #statuses: StatusCache;
  readonly #backoff = new CrashBackoff();
  /** Containers a liveness or startup probe has condemned, with the probe that did. */
  readonly #condemned = new Map<string, string>();
  readonly #waiting = new Map<string, Map<string, Waiting>>();
  /** Since when a sandbox or container name has been reserved by a create we did not see finish. */
  readonly #reserved = new Map<string, number>();
  /**
   * RunPodSandbox calls in flight: each starts a shim and a pause container (and a pod network),
   * the runtime's costliest work, mostly CPU. Past two per core they only slow each other: bounded
   * there, the first pods of a recovery run sooner and the last no later (docs/performance.md#recovery).
   */
  readonly #creating = new Semaphore(SANDBOX_CREATIONS);
  /** Each pod's sandbox and the IP the runtime gave it (PodSandboxStatus), asked once per sandbox. */
  readonly #podIPs = new Map<string, { sandboxId: string; ip: string }>();

  constructor(d: WorkerDeps) {
    this.#d = d;
    this.#statuses = new StatusCache(d.cri, d.signal);
  }

  /** Marks a container for a restart by the next sync (a failed liveness or startup probe). */
  condemn(containerId: string, probe: string): void {
    this.#condemned.set(containerId, probe);
  }

  async #runtime(uid: string): Promise<RuntimePod> {
    const labelSelector = { [POD_UID]: uid };
    const [sandboxes, containers] = await Promise.all([
      this.#d.cri.listPodSandbox({ labelSelector }, this.#d.signal),
      this.#d.cri.listContainers({ labelSelector }, this.#d.signal),
    ]);
    return { uid, sandboxes: sandboxes.sort(newestFirst), containers: containers.sort(newestFirst) };
  }

  #event(rec: PodRecord): Event {
    return (type, reason, message, container) =>
      this.#d.writes.add(() =>
        this.#d.store.events.record(
          {
            kind: 'Pod',
            namespace: rec.namespace,
            name: rec.name,
            uid: rec.uid,
            ...(container ? { fieldPath: `spec.${this.#listOf(rec.desired, container)}{${container}}` } : {}),
          },
          type,
          reason,
          message,
          'kubelet',
        ),
      );
  }

  #listOf(pod: Pod, name: string): string {
    return pod.spec.initContainers?.some((c) => c.name === name) ? 'initContainers' : 'containers';
  }

  logDir(rec: { namespace: string; name: string; uid: string }): string {
    return join(this.#d.dataDir, 'logs', `${rec.namespace}_${rec.name}_${rec.uid}`);
  }

  podDir(uid: string): string {
    return join(this.#d.dataDir, 'pods', uid);
  }

  /**
   * One reconciliation pass for a pod; safe to repeat, never run concurrently for the same pod.
   * `view` is what a relist just saw of the pod, when nothing was done to it since (it saves the
   * pass its own listing). Returns what the runtime holds for the pod afterwards, as far as this
   * pass knows, or undefined once the pod is gone.
   */
  async sync(rec: PodRecord, view?: RuntimePod): Promise<RuntimePod | undefined> {
    const pod = rec.desired;
    const event = this.#event(rec);
    let rt = view ?? (await this.#runtime(rec.uid));
    if (pod.metadata.deletionTimestamp) {
      await this.#terminate(rec, rt, event);
      return undefined;
    }
    // Whether this pass changed existing runtime objects (then it lists again at the end); what it
    // creates it adds to `rt` itself, so a recovery costs no listing beyond the relist's.
    let touched = false;
    const hash = podSpecHash(pod);
    let sandbox = rt.sandboxes.find((s) => s.state === 'SANDBOX_READY');
    if (sandbox && sandbox.annotations[SPEC_HASH] !== hash) {
      event('Normal', 'SandboxChanged', 'Pod spec changed, it will be killed and re-created.');
      await this.#killAll(rec, rt, event);
      rt = await this.#runtime(rec.uid);
      sandbox = undefined;
    }
    const previous = this.#d.store.pods.get(rec.namespace, rec.name)?.status;
    const waiting = new Map<string, Waiting>();
    this.#waiting.set(rec.uid, waiting);
    let sandboxConfig = buildSandboxConfig(pod, {
      attempt: Math.max(-1, ...rt.sandboxes.map((s) => s.metadata?.attempt ?? 0)) + 1,
      logDirectory: this.logDir(rec),
      specHash: hash,
      managedBy: this.#d.managedBy,
    });
    let volumes = new Map<string, string>();
    /** Image checks started early, by container name, for #start. */
    const checks = new Map<string, Promise<Image | null>>();
    if (!sandbox && isFinished(pod, previous)) return rt; // a completed pod is not started again
    try {
      volumes = await prepareVolumes(pod, this.#volumeCtx(rec));
    } catch (e) {
      event('Warning', 'FailedMount', (e as Error).message);
      for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
        waiting.set(c.name, { reason: 'CreateContainerConfigError', message: (e as Error).message });
      }
      await this.#writeStatus(rec, rt, undefined);
      return rt;
    }
    if (!sandbox) {
      if (rt.sandboxes.length) {
        event('Normal', 'SandboxChanged', 'Pod sandbox changed, it will be killed and re-created.');
        // A sandbox that is not ready (its pause process died) may still hold running containers:
        // stop it first, as kubelet's KillPod does, so that two copies never run side by side.
        // A pod network's sandbox is stopped in any case: that tears its network down (CNI DEL,
        // with no namespace left after a power cut), releasing its IP lease.
        for (const s of rt.sandboxes) {
          if (
            !isHostNetwork(pod) ||
            rt.containers.some((c) => c.podSandboxId === s.id && c.state !== 'CONTAINER_EXITED')
          ) {
            await this.#d.cri.stopPodSandbox(s.id, this.#d.signal);
            touched = true;
          }
        }
      }
      // The image checks of the containers this pass starts in the new sandbox (the first init
      // container, else every container) go out with RunPodSandbox rather than after it.
      const first = pod.spec.initContainers?.length ? [pod.spec.initContainers[0]!] : pod.spec.containers;
      for (const c of first) {
        const check = this.#d.images.check(c, this.#d.signal);
        if (check) checks.set(c.name, check);
      }
      mkdirSync(this.logDir(rec), { recursive: true });
      const made = await this.#runSandbox(rec, sandboxConfig);
      if (!made) return rt; // containerd is still creating it for an earlier request; a later pass adopts it
      sandboxConfig = made.config;
      sandbox = createdSandbox(made.id, sandboxConfig);
      rt = { ...rt, sandboxes: [sandbox, ...rt.sandboxes] };
    }
    const sandboxId = sandbox.id;
    const inSandbox = { ...rt, containers: rt.containers.filter((c) => c.podSandboxId === sandboxId) };
    const created: CriContainer[] = [];
    const start = async (c: Container, kind: 'init' | 'app') => {
      const made = await this.#start(
        rec,
        c,
        kind,
        sandboxId,
        sandboxConfig,
        rt,
        volumes,
        waiting,
        event,
        checks,
      );
      if (made) created.unshift(made);
    };
    const startCreated = async (id: string) => {
      touched = true;
      await this.#d.cri.startContainer(id, this.#d.signal);
    };

    // Init containers, one at a time, in order; each must succeed before the next starts.
    let initDone = true;
    for (const c of pod.spec.initContainers ?? []) {
      const cur = instances(inSandbox, c.name)[0];
      if (!cur) {
        initDone = false;
        await start(c, 'init');
        break;
      }
      if (cur.state === 'CONTAINER_CREATED') await startCreated(cur.id);
      if (cur.state !== 'CONTAINER_EXITED') {
        initDone = false;
        break;
      }
      if (this.#d.restarts?.take(cur.id)) {
        initDone = false;
        await start(c, 'init');
        break;
      }
      const s = await this.#statuses.get(cur);
      if (s.exitCode === 0) continue;
      initDone = false;
      if (pod.spec.restartPolicy !== 'Never')
        await this.#restartLater(rec, c, 'init', cur, start, waiting, event);
      break;
    }
    if (initDone) {
      for (const c of pod.spec.containers) {
        const cur = instances(inSandbox, c.name)[0];
        if (!cur) await start(c, 'app');
        else if (cur.state === 'CONTAINER_CREATED') await startCreated(cur.id);
        else if (cur.state === 'CONTAINER_RUNNING' && this.#condemned.has(cur.id)) {
          const probe = this.#condemned.get(cur.id);
          this.#condemned.delete(cur.id);
          event('Normal', 'Killing', `Container ${c.name} failed ${probe} probe, will be restarted`, c.name);
          await this.#d.cri.stopContainer(cur.id, grace(pod), this.#d.signal);
          this.#statuses.forget(cur.id);
          touched = true;
          // The exit is this pass's own doing, so no relist will report it: restart in a next pass.
          this.#d.wakeAt(rec.uid, this.#d.clock.now());
        } else if (cur.state === 'CONTAINER_EXITED' && this.#d.restarts?.take(cur.id)) {
          await start(c, 'app');
        } else if (cur.state === 'CONTAINER_EXITED') {
          const s = await this.#statuses.get(cur);
          const policy = pod.spec.restartPolicy ?? 'Always';
          if (policy === 'Always' || (policy === 'OnFailure' && s.exitCode !== 0)) {
            await this.#restartLater(rec, c, 'app', cur, start, waiting, event);
          }
        }
      }
    }
    if (touched) rt = await this.#runtime(rec.uid);
    else if (created.length) rt = { ...rt, containers: [...created, ...rt.containers] };
    await this.#writeStatus(rec, rt, sandboxId);
    return rt;
  }

  /**
   * RunPodSandbox; undefined when containerd still holds the name for an earlier request (one that
   * timed out here, or that an agent killed mid-way sent): the sandbox appears once it is done.
   */
  async #runSandbox(
    rec: PodRecord,
    config: PodSandboxConfig,
  ): Promise<{ id: string; config: PodSandboxConfig } | undefined> {
    const key = `${rec.uid}/`;
    try {
      const id = await this.#creating.run(() => this.#d.cri.runPodSandbox(config, '', this.#d.signal));
      this.#reserved.delete(key);
      return { id, config };
    } catch (e) {
      const holder = reservedFor(e);
      if (holder === undefined) throw e;
      if (this.#patient(key)) {
        this.#d.log.info(
          { pod: `${rec.namespace}/${rec.name}`, sandbox: holder },
          'waiting for an earlier creation of the sandbox to finish',
        );
        this.#d.wakeAt(rec.uid, this.#d.clock.now() + RESERVED_RETRY_MS);
        return undefined;
      }
      // A leaked reservation: a new attempt number is a new name.
      const next = {
        ...config,
        metadata: { ...config.metadata, attempt: (config.metadata.attempt ?? 0) + 1 },
      };
      const id = await this.#creating.run(() => this.#d.cri.runPodSandbox(next, '', this.#d.signal));
      return { id, config: next };
    }
  }

  /**
   * Whether to keep waiting for a reserved name: an earlier create of the same object is still
   * running in containerd, and waiting for it beats a second copy under another attempt number.
   * A name reserved for longer than RESERVED_PATIENCE_MS is taken as leaked.
   */
  #patient(key: string): boolean {
    const now = this.#d.clock.now();
    const since = this.#reserved.get(key) ?? now;
    this.#reserved.set(key, since);
    if (now - since < RESERVED_PATIENCE_MS) return true;
    this.#reserved.delete(key);
    return false;
  }

  #volumeCtx(rec: PodRecord, podIP = this.#d.hostIP) {
    const { store } = this.#d;
    return {
      podDir: this.podDir(rec.uid),
      nodeName: this.#d.nodeName,
      podIP,
      hostIP: this.#d.hostIP,
      lookup: (kind: string, ns: string, name: string) => store.objects.get(kind, ns, name),
    };
  }

  /** Restarts an exited container now, or marks it CrashLoopBackOff and asks to be woken when the backoff ends. */
  async #restartLater(
    rec: PodRecord,
    c: Container,
    kind: 'init' | 'app',
    cur: CriContainer,
    start: (c: Container, kind: 'init' | 'app') => Promise<void>,
    waiting: Map<string, Waiting>,
    event: Event,
  ): Promise<void> {
    const s = await this.#statuses.get(cur);
    const finished = nanosToMs(s.finishedAt);
    // A container that never started (StartError) ran for no time: it must not reset the backoff.
    const started = nanosToMs(s.startedAt);
    const ran = started > 0 && finished > started ? finished - started : 0;
    const verdict = this.#backoff.check(`${rec.uid}/${c.name}`, this.#d.clock.now(), finished, ran);
    if (verdict.allowed) return start(c, kind);
    const message = `back-off ${Math.round(verdict.delayMs / 1000)}s restarting failed container=${c.name} pod=${rec.name}_${rec.namespace}(${rec.uid})`;
    waiting.set(c.name, { reason: 'CrashLoopBackOff', message });
    event(
      'Warning',
      'BackOff',
      `Back-off restarting failed container ${c.name} in pod ${rec.name}_${rec.namespace}(${rec.uid})`,
      c.name,
    );
    this.#d.wakeAt(rec.uid, verdict.at);
  }

  /** Pulls, creates and starts one container instance; problems become its waiting reason. */
  async #start(
    rec: PodRecord,
    c: Container,
    kind: 'init' | 'app',
    sandboxId: string,
    sandboxConfig: PodSandboxConfig,
    rt: RuntimePod,
    volumes: Map<string, string>,
    waiting: Map<string, Waiting>,
    event: Event,
    checks: Map<string, Promise<Image | null>>,
  ): Promise<CriContainer | undefined> {
    const pod = rec.desired;
    const all = instances(rt, c.name);
    const imageEvent = (type: 'Normal' | 'Warning', reason: string, message: string) =>
      event(type, reason, message, c.name);
    const checked = checks.get(c.name);
    checks.delete(c.name); // once: a later start of the same container in this pass asks again
    try {
      await this.#d.images.ensure(c, imageEvent, checked, this.#d.signal);
    } catch (e) {
      if (!(e instanceof ImageError)) throw e;
      waiting.set(c.name, { reason: e.reason, message: e.message });
      this.#d.wakeAt(rec.uid, this.#d.clock.now() + 10_000);
      return undefined;
    }
    let envs: { key: string; value: string }[];
    try {
      envs = resolveEnv(pod, c, this.#volumeCtx(rec, await this.#podIP(rec, sandboxId))).envs;
    } catch (e) {
      if (!(e instanceof ContainerConfigError)) throw e;
      waiting.set(c.name, { reason: 'CreateContainerConfigError', message: e.message });
      event('Warning', 'Failed', `Error: ${e.message}`, c.name);
      this.#d.wakeAt(rec.uid, this.#d.clock.now() + 10_000);
      return undefined;
    }
    // With no instance left in the runtime (wiped, or a power cut of a runtime that keeps nothing),
    // the count goes on from the log files the earlier instances left, as kubelet does, or from
    // the stored status.
    const restartCount = all.length
      ? Math.max(...all.map((i) => Number(i.annotations[CONTAINER_RESTART_COUNT] ?? 0))) + 1
      : Math.max(
          restartsFromLogs(join(this.logDir(rec), c.name)),
          restartsBefore(this.#d.store.pods.get(rec.namespace, rec.name)?.status, c.name),
        );
    // The attempt is the restart count, as kubelet has it: containerd names a container
    // name_pod_namespace_uid_attempt whatever its sandbox, so an instance left in an earlier
    // sandbox (after a power cut) must not share it.
    let attempt = restartCount;
    const config = () => {
      const cfg = buildContainerConfig(pod, c, {
        attempt,
        restartCount,
        volumes,
        envs,
        logPath: `${c.name}/${restartCount}.log`,
        specHash: podSpecHash(pod),
      });
      cfg.labels = { ...cfg.labels, [MANAGED_BY]: this.#d.managedBy };
      cfg.annotations = { ...cfg.annotations, [CONTAINER_KIND]: kind };
      return cfg;
    };
    mkdirSync(join(this.logDir(rec), c.name), { recursive: true });
    const key = `${rec.uid}/${c.name}`;
    let cfg = config();
    let id: string;
    try {
      id = await this.#d.cri.createContainer(sandboxId, cfg, sandboxConfig, this.#d.signal);
      this.#reserved.delete(key);
    } catch (e) {
      if (this.#d.signal?.aborted) throw e; // cancelled, not failed: the next start creates it
      const message = (e as Error).message;
      const holder = reservedFor(e);
      if (holder === undefined) {
        event('Warning', 'Failed', `Error: ${message}`, c.name);
        waiting.set(c.name, { reason: 'CreateContainerError', message });
        this.#d.wakeAt(rec.uid, this.#d.clock.now() + 10_000);
        return undefined;
      }
      if (!all.some((i) => i.id === holder) && this.#patient(key)) {
        // An earlier CreateContainer of this very instance is still running in containerd (it timed
        // out here, or an agent killed mid-way sent it): it shows up as created and a later pass
        // starts it, rather than a second copy under another attempt number.
        waiting.set(c.name, { reason: 'ContainerCreating' });
        this.#d.wakeAt(rec.uid, this.#d.clock.now() + RESERVED_RETRY_MS);
        return undefined;
      }
      // The name is held by an instance we know of, or by a leaked reservation: take a free one.
      attempt = Math.max(attempt, ...all.map((i) => i.metadata?.attempt ?? 0)) + 1;
      cfg = config();
      id = await this.#d.cri.createContainer(sandboxId, cfg, sandboxConfig, this.#d.signal);
      this.#reserved.delete(key);
    }
    event('Normal', 'Created', `Created container ${c.name}`, c.name);
    let state: CriContainer['state'] = 'CONTAINER_RUNNING';
    try {
      await this.#d.cri.startContainer(id, this.#d.signal);
      event('Normal', 'Started', `Started container ${c.name}`, c.name);
    } catch (e) {
      if (this.#d.signal?.aborted) throw e; // cancelled: a later pass starts the created container
      event('Warning', 'Failed', `Error: ${(e as Error).message}`, c.name);
      state = 'CONTAINER_UNKNOWN'; // never what a relist reports, so the next one looks again
    }
    waiting.delete(c.name);
    return {
      id,
      podSandboxId: sandboxId,
      metadata: { name: c.name, attempt },
      image: null,
      imageRef: '',
      state,
      createdAt: nowNanos(),
      labels: cfg.labels ?? {},
      annotations: cfg.annotations ?? {},
    };
  }

  /**
   * Computes the pod's status from the runtime and writes it as the pod's status patch when it
   * changed. `final`: the pod's last status before its removal (every container stopped, no
   * probing, a terminal phase), written at once rather than with the next batch.
   */
  async #writeStatus(
    rec: PodRecord,
    rt: RuntimePod,
    sandboxId: string | undefined,
    final = false,
  ): Promise<void> {
    const pod = rec.desired;
    const waiting = (!final && this.#waiting.get(rec.uid)) || new Map<string, Waiting>();
    const inSandbox = { ...rt, containers: rt.containers.filter((c) => c.podSandboxId === sandboxId) };
    const resolve = async (c: Container) => {
      const [cur, prev] = instances(inSandbox, c.name);
      const [s, p] = await Promise.all([cur && this.#statuses.get(cur), prev && this.#statuses.get(prev)]);
      return { spec: c, current: cur && s && { c: cur, s }, previous: prev && p && { c: prev, s: p } };
    };
    const [initRaw, appRaw] = await Promise.all([
      Promise.all((pod.spec.initContainers ?? []).map(resolve)),
      Promise.all(pod.spec.containers.map(resolve)),
    ]);
    // The prober learns about new instances before it is asked whether they are started and ready.
    // httpGet, tcpSocket and grpc probes dial the pod's IP (the node's for a host-network pod).
    const sandboxReady =
      !!sandboxId && rt.sandboxes.some((s) => s.id === sandboxId && s.state === 'SANDBOX_READY');
    const ips = { podIP: sandboxReady ? await this.#podIP(rec, sandboxId) : '', hostIP: this.#d.hostIP };
    if (!final)
      this.#d.prober.sync(
        { ...pod, status: { ...pod.status, ...ips } },
        appRaw
          .filter((v) => v.current)
          .map((v) => ({
            name: v.spec.name,
            containerId: v.current!.c.id,
            running: v.current!.s.state === 'CONTAINER_RUNNING',
            startedAt: nanosToMs(v.current!.s.startedAt),
          })),
      );
    const previous = this.#d.store.pods.get(rec.namespace, rec.name)?.status;
    const view = (v: Awaited<ReturnType<typeof resolve>>): ContainerView => {
      const running = v.current?.s.state === 'CONTAINER_RUNNING';
      const started = running && this.#d.prober.started(rec.uid, v.spec.name);
      return {
        ...v,
        // A container without an instance in this sandbox (a new one, after a power cut) keeps the
        // count it had, as kubelet's convertToAPIContainerStatuses does.
        restartCount: v.current
          ? Number(v.current.c.annotations[CONTAINER_RESTART_COUNT] ?? 0)
          : (lastStatus(previous, v.spec.name)?.restartCount ?? 0),
        waiting: waiting.get(v.spec.name),
        started,
        ready: started && this.#d.prober.ready(rec.uid, v.spec.name),
      };
    };
    const init = initRaw.map(view);
    const app = appRaw.map(view);
    const status = computeStatus({
      pod,
      previous: previous && Object.keys(previous).length > 2 ? previous : undefined,
      sandboxReady,
      init,
      app,
      hostIP: this.#d.hostIP,
      podIP: ips.podIP,
      now: this.#d.clock.now(),
      terminal: final,
    });
    if (!final) return this.#d.writes.add(() => this.#d.store.pods.setStatus(rec.uid, status));
    // Queued statuses first, so none of them lands after this one.
    this.#d.writes.flush();
    this.#d.store.pods.setStatus(rec.uid, status);
  }

  /** Recomputes the status without acting (e.g. a readiness probe flipped). */
  async refreshStatus(rec: PodRecord): Promise<void> {
    const rt = await this.#runtime(rec.uid);
    const sandbox = rt.sandboxes.find((s) => s.state === 'SANDBOX_READY');
    await this.#writeStatus(rec, rt, sandbox?.id);
  }

  /**
   * The pod's IP in `sandboxId`: the node's for a host-network pod, else what the runtime's CNI
   * setup gave the sandbox ('' when the runtime does not say).
   */
  async #podIP(rec: PodRecord, sandboxId: string | undefined): Promise<string> {
    if (isHostNetwork(rec.desired)) return this.#d.hostIP;
    if (!sandboxId) return '';
    const known = this.#podIPs.get(rec.uid);
    if (known?.sandboxId === sandboxId) return known.ip;
    const ip = await this.#d.cri.podSandboxStatus(sandboxId, this.#d.signal).then(
      (s) => s.network?.ip ?? '',
      (err) => {
        // Cancelled (the agent stopping): the pass ends here, no status is written without the IP.
        if (this.#d.signal?.aborted) throw err;
        this.#d.log.debug({ err, sandbox: sandboxId }, 'no sandbox status for the pod IP');
        return '';
      },
    );
    if (ip) this.#podIPs.set(rec.uid, { sandboxId, ip });
    return ip;
  }

  /** Stops every container (within the grace period) and the sandbox. */
  async #killAll(rec: PodRecord, rt: RuntimePod, event: Event): Promise<void> {
    const g = grace(rec.desired);
    await Promise.all(
      rt.containers
        .filter((c) => c.state === 'CONTAINER_RUNNING')
        .map(async (c) => {
          const name = c.metadata?.name ?? '';
          event('Normal', 'Killing', `Stopping container ${name}`, name);
          await this.#d.cri.stopContainer(c.id, g, this.#d.signal);
        }),
    );
    for (const s of rt.sandboxes)
      if (s.state === 'SANDBOX_READY') await this.#d.cri.stopPodSandbox(s.id, this.#d.signal);
    this.#d.prober.stopPod(rec.uid);
  }

  /**
   * A pod marked for deletion: stop it within its grace period, remove it from the runtime and the
   * metabase. Cancelled stops (the agent stopping) throw before anything is written or removed: the
   * pod stays marked deleting and the next start terminates it again.
   */
  async #terminate(rec: PodRecord, rt: RuntimePod, event: Event): Promise<void> {
    await this.#killAll(rec, rt, event);
    // A cloud pod's last status (containers terminated, a terminal phase) reaches the cloud before
    // the node's DELETE, as kubelet's status manager sends it: the outbox keeps that order. Not for
    // a pod the cloud removed already, nor for one that never ran a container here.
    if (rec.source === 'cloud' && rec.origin !== GONE && rt.containers.length > 0) {
      const stopped = await this.#runtime(rec.uid);
      const sandbox = rt.sandboxes.find((s) => s.state === 'SANDBOX_READY') ?? rt.sandboxes[0];
      await this.#writeStatus(rec, stopped, sandbox?.id, true);
    }
    // StopPodSandbox before RemovePodSandbox, for every sandbox: stopping one that is not ready (its
    // pause process died, a power cut) is what tears its pod network down and releases its IP.
    for (const s of rt.sandboxes) {
      if (s.state !== 'SANDBOX_READY') await this.#d.cri.stopPodSandbox(s.id, this.#d.signal).catch(() => {});
      await this.#d.cri.removePodSandbox(s.id, this.#d.signal);
    }
    this.#podIPs.delete(rec.uid);
    for (const c of rt.containers) this.#statuses.forget(c.id);
    await cleanupVolumes(this.podDir(rec.uid));
    rmSync(this.logDir(rec), { recursive: true, force: true });
    this.#backoff.forget(`${rec.uid}/`);
    for (const key of this.#reserved.keys()) if (key.startsWith(`${rec.uid}/`)) this.#reserved.delete(key);
    this.#waiting.delete(rec.uid);
    this.#d.store.pods.remove(rec.namespace, rec.name);
    this.#d.log.info({ pod: `${rec.namespace}/${rec.name}` }, 'pod removed');
  }

  /** Forgets cached statuses of containers the garbage collector removed. */
  forgetContainer(id: string): void {
    this.#statuses.forget(id);
  }
}

/** RunPodSandbox calls at once: two per core (4 on a 2-core board). */
export const SANDBOX_CREATIONS = 2 * Math.max(1, os.availableParallelism?.() ?? os.cpus().length);

/** How long a reserved name is waited for before it is taken as leaked, and how often it is retried. */
const RESERVED_PATIENCE_MS = 60_000;
const RESERVED_RETRY_MS = 500;

/** The ID holding the name, when `e` is containerd's "failed to reserve (sandbox|container) name". */
function reservedFor(e: unknown): string | undefined {
  const m = /failed to reserve (?:sandbox|container) name[\s\S]*?is reserved for \W*([0-9a-f]+)/.exec(
    (e as Error).message,
  );
  return m?.[1];
}

const nowNanos = () => String(BigInt(Date.now()) * 1_000_000n);

/** What ListPodSandbox would report for a sandbox RunPodSandbox just created and started. */
function createdSandbox(id: string, config: PodSandboxConfig): PodSandbox {
  const { name, uid, namespace, attempt = 0 } = config.metadata;
  return {
    id,
    metadata: { name, uid, namespace, attempt },
    state: 'SANDBOX_READY',
    createdAt: nowNanos(),
    labels: config.labels ?? {},
    annotations: config.annotations ?? {},
    runtimeHandler: '',
  };
}

const grace = (pod: Pod) =>
  Number(pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30);

/** The restart count to continue from when the runtime lost a container (a wiped runtime, a power cut). */
function restartsBefore(status: PodStatus | undefined, name: string): number {
  const s = lastStatus(status, name);
  if (!s) return 0;
  return s.containerID ? s.restartCount + 1 : s.restartCount;
}

/** The stored status of one container (app or init). */
const lastStatus = (status: PodStatus | undefined, name: string) =>
  [...(status?.containerStatuses ?? []), ...(status?.initContainerStatuses ?? [])].find(
    (c) => c.name === name,
  );

/** kubelet's calcRestartCountByLogDir: one more than the highest N of the `N.log[.*]` files. */
function restartsFromLogs(dir: string): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let count = 0;
  for (const name of names) {
    const m = /^(\d+)\.log(\..*)?$/.exec(name);
    if (m) count = Math.max(count, Number(m[1]) + 1);
  }
  return count;
}

/** A pod that ran to completion under OnFailure/Never is not started again. */
function isFinished(pod: Pod, status: PodStatus | undefined): boolean {
  return pod.spec.restartPolicy !== 'Always' && (status?.phase === 'Succeeded' || status?.phase === 'Failed');
}

export type { Timer };
