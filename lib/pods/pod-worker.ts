import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock, Timer } from '../clock.ts';
import type { CriClient } from '../cri/client.ts';
import type { Container as CriContainer, PodSandboxConfig } from '../cri/types.ts';
import type { Container, Pod, PodStatus } from '../kube/types.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../store/index.ts';
import type { PodRecord } from '../store/pods.ts';
import { buildContainerConfig, podSpecHash } from './container-config.ts';
import { CrashBackoff } from './crash-backoff.ts';
import { ContainerConfigError, resolveEnv } from './env.ts';
import { ImageError, type ImagePuller } from './images.ts';
import { CONTAINER_KIND, CONTAINER_RESTART_COUNT, MANAGED_BY, POD_UID, SPEC_HASH } from './labels.ts';
import { instances, nanosToMs, type RuntimePod, StatusCache } from './runtime-view.ts';
import { buildSandboxConfig } from './sandbox.ts';
import { type ContainerView, computeStatus, type Waiting } from './status.ts';
import { cleanupVolumes, prepareVolumes } from './volumes.ts';

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

  constructor(d: WorkerDeps) {
    this.#d = d;
    this.#statuses = new StatusCache(d.cri);
  }

  /** Marks a container for a restart by the next sync (a failed liveness or startup probe). */
  condemn(containerId: string, probe: string): void {
    this.#condemned.set(containerId, probe);
  }

  async #runtime(uid: string): Promise<RuntimePod> {
    const labelSelector = { [POD_UID]: uid };
    const [sandboxes, containers] = await Promise.all([
      this.#d.cri.listPodSandbox({ labelSelector }),
      this.#d.cri.listContainers({ labelSelector }),
    ]);
    const byNewest = <T extends { createdAt: string }>(a: T, b: T) =>
      BigInt(b.createdAt) > BigInt(a.createdAt) ? 1 : -1;
    return { uid, sandboxes: sandboxes.sort(byNewest), containers: containers.sort(byNewest) };
  }

  #event(rec: PodRecord): Event {
    return (type, reason, message, container) =>
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

  /** One reconciliation pass for a pod; safe to repeat, never run concurrently for the same pod. */
  async sync(rec: PodRecord): Promise<void> {
    const pod = rec.desired;
    const event = this.#event(rec);
    let rt = await this.#runtime(rec.uid);
    if (pod.metadata.deletionTimestamp) return this.#terminate(rec, rt, event);
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
    const sandboxConfig = buildSandboxConfig(pod, {
      attempt: Math.max(-1, ...rt.sandboxes.map((s) => s.metadata?.attempt ?? 0)) + 1,
      logDirectory: this.logDir(rec),
      specHash: hash,
      managedBy: this.#d.managedBy,
    });
    let volumes = new Map<string, string>();
    if (!sandbox && isFinished(pod, previous)) return; // a completed pod is not started again
    try {
      volumes = await prepareVolumes(pod, this.#volumeCtx(rec));
    } catch (e) {
      event('Warning', 'FailedMount', (e as Error).message);
      for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
        waiting.set(c.name, { reason: 'CreateContainerConfigError', message: (e as Error).message });
      }
      return this.#writeStatus(rec, rt, undefined);
    }
    if (!sandbox) {
      if (rt.sandboxes.length)
        event('Normal', 'SandboxChanged', 'Pod sandbox changed, it will be killed and re-created.');
      mkdirSync(this.logDir(rec), { recursive: true });
      const id = await this.#d.cri.runPodSandbox(sandboxConfig);
      rt = await this.#runtime(rec.uid);
      sandbox = rt.sandboxes.find((s) => s.id === id);
      if (!sandbox) throw new Error(`sandbox ${id} vanished right after it was created`);
    }
    const sandboxId = sandbox.id;
    const inSandbox = { ...rt, containers: rt.containers.filter((c) => c.podSandboxId === sandboxId) };
    const start = (c: Container, kind: 'init' | 'app') =>
      this.#start(rec, c, kind, sandboxId, sandboxConfig, rt, volumes, waiting, event);

    // Init containers, one at a time, in order; each must succeed before the next starts.
    let initDone = true;
    for (const c of pod.spec.initContainers ?? []) {
      const cur = instances(inSandbox, c.name)[0];
      if (!cur) {
        initDone = false;
        await start(c, 'init');
        break;
      }
      if (cur.state === 'CONTAINER_CREATED') await this.#d.cri.startContainer(cur.id);
      if (cur.state !== 'CONTAINER_EXITED') {
        initDone = false;
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
        else if (cur.state === 'CONTAINER_CREATED') await this.#d.cri.startContainer(cur.id);
        else if (cur.state === 'CONTAINER_RUNNING' && this.#condemned.has(cur.id)) {
          const probe = this.#condemned.get(cur.id);
          this.#condemned.delete(cur.id);
          event('Normal', 'Killing', `Container ${c.name} failed ${probe} probe, will be restarted`, c.name);
          await this.#d.cri.stopContainer(cur.id, grace(pod));
          this.#statuses.forget(cur.id);
        } else if (cur.state === 'CONTAINER_EXITED') {
          const s = await this.#statuses.get(cur);
          const policy = pod.spec.restartPolicy ?? 'Always';
          if (policy === 'Always' || (policy === 'OnFailure' && s.exitCode !== 0)) {
            await this.#restartLater(rec, c, 'app', cur, start, waiting, event);
          }
        }
      }
    }
    rt = await this.#runtime(rec.uid);
    await this.#writeStatus(rec, rt, sandboxId);
  }

  #volumeCtx(rec: PodRecord) {
    const { store } = this.#d;
    return {
      podDir: this.podDir(rec.uid),
      nodeName: this.#d.nodeName,
      podIP: this.#d.hostIP,
      hostIP: this.#d.hostIP,
      lookup: (kind: 'ConfigMap' | 'Secret', ns: string, name: string) => store.objects.get(kind, ns, name),
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
    const ran = finished - nanosToMs(s.startedAt);
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
  ): Promise<void> {
    const pod = rec.desired;
    const all = instances(rt, c.name);
    const imageEvent = (type: 'Normal' | 'Warning', reason: string, message: string) =>
      event(type, reason, message, c.name);
    try {
      await this.#d.images.ensure(c, imageEvent);
    } catch (e) {
      if (!(e instanceof ImageError)) throw e;
      waiting.set(c.name, { reason: e.reason, message: e.message });
      this.#d.wakeAt(rec.uid, this.#d.clock.now() + 10_000);
      return;
    }
    let envs: { key: string; value: string }[];
    try {
      envs = resolveEnv(pod, c, { ...this.#volumeCtx(rec) }).envs;
    } catch (e) {
      if (!(e instanceof ContainerConfigError)) throw e;
      waiting.set(c.name, { reason: 'CreateContainerConfigError', message: e.message });
      event('Warning', 'Failed', `Error: ${e.message}`, c.name);
      this.#d.wakeAt(rec.uid, this.#d.clock.now() + 10_000);
      return;
    }
    const restartCount = all.length
      ? Math.max(...all.map((i) => Number(i.annotations[CONTAINER_RESTART_COUNT] ?? 0))) + 1
      : restartsBefore(this.#d.store.pods.get(rec.namespace, rec.name)?.status, c.name);
    let attempt =
      Math.max(-1, ...all.filter((i) => i.podSandboxId === sandboxId).map((i) => i.metadata?.attempt ?? 0)) +
      1;
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
    let id: string;
    try {
      id = await this.#d.cri.createContainer(sandboxId, config(), sandboxConfig);
    } catch (e) {
      // containerd keeps a name reserved after an interrupted create; a new attempt number frees us of it.
      if (!/reserve|already exists/i.test((e as Error).message)) {
        event('Warning', 'Failed', `Error: ${(e as Error).message}`, c.name);
        waiting.set(c.name, { reason: 'CreateContainerError', message: (e as Error).message });
        this.#d.wakeAt(rec.uid, this.#d.clock.now() + 10_000);
        return;
      }
      attempt += 1;
      id = await this.#d.cri.createContainer(sandboxId, config(), sandboxConfig);
    }
    event('Normal', 'Created', `Created container ${c.name}`, c.name);
    try {
      await this.#d.cri.startContainer(id);
      event('Normal', 'Started', `Started container ${c.name}`, c.name);
    } catch (e) {
      event('Warning', 'Failed', `Error: ${(e as Error).message}`, c.name);
    }
    waiting.delete(c.name);
  }

  /** Computes the pod's status from the runtime and writes it as the pod's status patch when it changed. */
  async #writeStatus(rec: PodRecord, rt: RuntimePod, sandboxId: string | undefined): Promise<void> {
    const pod = rec.desired;
    const waiting = this.#waiting.get(rec.uid) ?? new Map<string, Waiting>();
    const inSandbox = { ...rt, containers: rt.containers.filter((c) => c.podSandboxId === sandboxId) };
    const resolve = async (c: Container) => {
      const [cur, prev] = instances(inSandbox, c.name);
      return {
        spec: c,
        current: cur && { c: cur, s: await this.#statuses.get(cur) },
        previous: prev && { c: prev, s: await this.#statuses.get(prev) },
      };
    };
    const initRaw = await Promise.all((pod.spec.initContainers ?? []).map(resolve));
    const appRaw = await Promise.all(pod.spec.containers.map(resolve));
    // The prober learns about new instances before it is asked whether they are started and ready.
    this.#d.prober.sync(
      pod,
      appRaw
        .filter((v) => v.current)
        .map((v) => ({
          name: v.spec.name,
          containerId: v.current!.c.id,
          running: v.current!.s.state === 'CONTAINER_RUNNING',
          startedAt: nanosToMs(v.current!.s.startedAt),
        })),
    );
    const view = (v: Awaited<ReturnType<typeof resolve>>): ContainerView => {
      const running = v.current?.s.state === 'CONTAINER_RUNNING';
      const started = running && this.#d.prober.started(rec.uid, v.spec.name);
      return {
        ...v,
        restartCount: Number(v.current?.c.annotations[CONTAINER_RESTART_COUNT] ?? 0),
        waiting: waiting.get(v.spec.name),
        started,
        ready: started && this.#d.prober.ready(rec.uid, v.spec.name),
      };
    };
    const init = initRaw.map(view);
    const app = appRaw.map(view);
    const previous = this.#d.store.pods.get(rec.namespace, rec.name)?.status;
    const status = computeStatus({
      pod,
      previous: previous && Object.keys(previous).length > 2 ? previous : undefined,
      sandboxReady:
        !!sandboxId && rt.sandboxes.some((s) => s.id === sandboxId && s.state === 'SANDBOX_READY'),
      init,
      app,
      hostIP: this.#d.hostIP,
      podIP: this.#d.hostIP,
      now: this.#d.clock.now(),
    });
    this.#d.store.pods.setStatus(rec.uid, status);
  }

  /** Recomputes the status without acting (e.g. a readiness probe flipped). */
  async refreshStatus(rec: PodRecord): Promise<void> {
    const rt = await this.#runtime(rec.uid);
    const sandbox = rt.sandboxes.find((s) => s.state === 'SANDBOX_READY');
    await this.#writeStatus(rec, rt, sandbox?.id);
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
          await this.#d.cri.stopContainer(c.id, g);
        }),
    );
    for (const s of rt.sandboxes) if (s.state === 'SANDBOX_READY') await this.#d.cri.stopPodSandbox(s.id);
    this.#d.prober.stopPod(rec.uid);
  }

  /** A pod marked for deletion: stop it within its grace period, remove it from the runtime and the metabase. */
  async #terminate(rec: PodRecord, rt: RuntimePod, event: Event): Promise<void> {
    await this.#killAll(rec, rt, event);
    for (const s of rt.sandboxes) await this.#d.cri.removePodSandbox(s.id);
    for (const c of rt.containers) this.#statuses.forget(c.id);
    await cleanupVolumes(this.podDir(rec.uid));
    rmSync(this.logDir(rec), { recursive: true, force: true });
    this.#backoff.forget(`${rec.uid}/`);
    this.#waiting.delete(rec.uid);
    this.#d.store.pods.remove(rec.namespace, rec.name);
    this.#d.log.info({ pod: `${rec.namespace}/${rec.name}` }, 'pod removed');
  }

  /** Forgets cached statuses of containers the garbage collector removed. */
  forgetContainer(id: string): void {
    this.#statuses.forget(id);
  }
}

const grace = (pod: Pod) =>
  Number(pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30);

/** The restart count to continue from when the runtime lost a container (a wiped runtime, a power cut). */
function restartsBefore(status: PodStatus | undefined, name: string): number {
  const s = [...(status?.containerStatuses ?? []), ...(status?.initContainerStatuses ?? [])].find(
    (c) => c.name === name,
  );
  if (!s) return 0;
  return s.containerID ? s.restartCount + 1 : s.restartCount;
}

/** A pod that ran to completion under OnFailure/Never is not started again. */
function isFinished(pod: Pod, status: PodStatus | undefined): boolean {
  return pod.spec.restartPolicy !== 'Always' && (status?.phase === 'Succeeded' || status?.phase === 'Failed');
}

export type { Timer };
