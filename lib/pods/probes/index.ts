// Container probes for the pod lifecycle manager, as kubelet's prober manager keeps them
// (pkg/kubelet/prober/prober_manager.go): one worker per probe of each running container
// instance, and the `ready` / `started` answers for containerStatuses.
import type { Clock } from '#lib/clock.ts';
import { systemClock } from '#lib/clock.ts';
import type { Container, Pod } from '#lib/kube/types.ts';
import type { ContainerPort, ExecFn, K8sProbe, ProbeTarget, ProbeType } from './run.ts';
import type { ProbeAttempt } from './worker.ts';
import { ProbeWorker } from './worker.ts';

export type {
  ContainerPort,
  ExecFn,
  IntOrString,
  K8sProbe,
  ProbeOutcome,
  ProbeResult,
  ProbeTarget,
  ProbeType,
} from './run.ts';
export { resolvePort, runProbe } from './run.ts';
export type { ProbeAttempt, ProbeResultChange, ProbeWorkerOptions } from './worker.ts';
export { ProbeWorker } from './worker.ts';

/** What the manager knows of one container from the runtime. */
export interface ProbeContainerStatus {
  name: string;
  containerId: string;
  running: boolean;
  /** RFC 3339 string, epoch ms or Date; initialDelaySeconds counts from it. */
  startedAt?: string | number | Date | null;
}

export type ProbeEventReason = 'Unhealthy' | 'ProbeWarning';

export interface ProbeManagerOptions {
  exec: ExecFn;
  clock?: Clock;
  /** A container's `ready` or `started` changed: recompute the pod status. */
  onChange?: (uid: string) => void;
  /** A liveness (or startup) probe reached its failure threshold: kill the container so it restarts. */
  onLivenessFailure?: (
    uid: string,
    containerName: string,
    containerId: string,
    output: string,
    probeType: 'liveness' | 'startup',
  ) => void;
  /** Every failed, errored or redirected probe, worded as kubelet's events. */
  onEvent?: (
    uid: string,
    type: 'Warning',
    reason: ProbeEventReason,
    message: string,
    containerName: string,
  ) => void;
  /** A callback above threw inside a probe worker (probing goes on); for the log. */
  onError?: (err: unknown, uid: string, containerName: string) => void;
}

interface Entry {
  containerId: string;
  target: ProbeTarget;
  workers: Partial<Record<ProbeType, ProbeWorker>>;
  /** The pod is being deleted: liveness and startup no longer run, as in kubelet. */
  terminating: boolean;
}

const TITLE: Record<ProbeType, string> = { liveness: 'Liveness', readiness: 'Readiness', startup: 'Startup' };

/** Runs the probes of every running container and answers `ready` / `started` for its status. */
export class ProbeManager {
  private readonly opts: ProbeManagerOptions;
  private readonly clock: Clock;
  private readonly pods = new Map<string, Map<string, Entry>>();

  constructor(opts: ProbeManagerOptions) {
    this.opts = opts;
    this.clock = opts.clock ?? systemClock;
  }

  /** Starts workers for newly running container instances; stops those of gone or replaced ones. */
  sync(pod: Pod, statuses: ProbeContainerStatus[]): void {
    const uid = podUid(pod);
    const specs = new Map(probedContainers(pod).map((c) => [c.name, c]));
    const entries = this.pods.get(uid) ?? new Map<string, Entry>();
    const live = new Set<string>();
    const deleting = Boolean(pod.metadata.deletionTimestamp);
    for (const s of statuses) {
      const spec = specs.get(s.name);
      if (!spec || !s.running || !s.containerId) continue;
      live.add(s.name);
      let e = entries.get(s.name);
      if (e && e.containerId !== s.containerId) {
        stopEntry(e);
        e = undefined;
      }
      if (!e) {
        e = this.start(uid, spec, s);
        entries.set(s.name, e);
      }
      e.target.podIP = pod.status?.podIP ?? '';
      e.target.hostIP = pod.status?.hostIP ?? '';
      if (deleting && !e.terminating) {
        e.terminating = true;
        for (const t of ['liveness', 'startup'] as const) e.workers[t]?.stop();
        e.workers.readiness?.trigger();
      }
    }
    for (const [name, e] of entries) {
      if (live.has(name)) continue;
      stopEntry(e);
      entries.delete(name);
    }
    if (entries.size > 0) this.pods.set(uid, entries);
    else this.pods.delete(uid);
  }

  /** containerStatuses[].ready: running, started, and the readiness probe (if any) succeeded. */
  ready(uid: string, name: string): boolean {
    const e = this.pods.get(uid)?.get(name);
    if (!e || !this.started(uid, name)) return false;
    const w = e.workers.readiness;
    return w ? w.result === 'success' : true;
  }

  /** containerStatuses[].started: running and the startup probe (if any) succeeded. */
  started(uid: string, name: string): boolean {
    const e = this.pods.get(uid)?.get(name);
    if (!e) return false;
    const w = e.workers.startup;
    return e.terminating || !w || w.result === 'success';
  }

  /** Stops every worker of a pod and forgets it. */
  stopPod(uid: string): void {
    for (const e of this.pods.get(uid)?.values() ?? []) stopEntry(e);
    this.pods.delete(uid);
  }

  stopAll(): void {
    for (const uid of [...this.pods.keys()]) this.stopPod(uid);
  }

  private start(uid: string, spec: Container, s: ProbeContainerStatus): Entry {
    const target: ProbeTarget = {
      containerId: s.containerId,
      podIP: '',
      hostIP: '',
      exec: this.opts.exec,
      ports: (spec.ports as ContainerPort[] | undefined) ?? [],
    };
    const e: Entry = { containerId: s.containerId, target, workers: {}, terminating: false };
    const startedAt = toMs(s.startedAt) ?? this.clock.now();
    const changed = () => this.opts.onChange?.(uid);
    const gate = () => e.terminating || !e.workers.startup || e.workers.startup.result === 'success';
    const make = (type: ProbeType, probe: K8sProbe) =>
      new ProbeWorker({
        type,
        containerName: spec.name,
        probe,
        target,
        clock: this.clock,
        startedAt,
        ...(type !== 'startup' && { gate }),
        onResult: (c) => {
          if (type === 'startup' && c.result === 'success') e.workers.readiness?.trigger();
          if (type !== 'liveness') changed();
        },
        onFailureThreshold: (c) => {
          if (type === 'readiness') return;
          this.opts.onLivenessFailure?.(uid, spec.name, s.containerId, c.output, type);
        },
        onProbe: (a) => this.event(uid, a),
        onError: (err) => this.opts.onError?.(err, uid, spec.name),
      });
    // Startup first: the others' gate reads it.
    for (const type of ['startup', 'readiness', 'liveness'] as const) {
      const probe = spec[`${type}Probe`] as K8sProbe | undefined | null;
      if (probe) e.workers[type] = make(type, probe);
    }
    return e;
  }

  private event(uid: string, { type, containerName, outcome }: ProbeAttempt): void {
    const title = TITLE[type];
    const emit = (reason: ProbeEventReason, message: string) =>
      this.opts.onEvent?.(uid, 'Warning', reason, message, containerName);
    if (outcome.result === 'failure') emit('Unhealthy', `${title} probe failed: ${outcome.output}`);
    else if (outcome.result === 'unknown') {
      emit('Unhealthy', `${title} probe errored and resulted in unknown state: ${outcome.output}`);
    } else if (outcome.warning) emit('ProbeWarning', `${title} probe warning: ${outcome.output}`);
  }
}

function stopEntry(e: Entry): void {
  for (const w of Object.values(e.workers)) w.stop();
}

const podUid = (pod: Pod) =>
  pod.metadata.uid ?? `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;

/** App containers, and sidecars (init containers with restartPolicy Always), which kubelet probes too. */
function probedContainers(pod: Pod): Container[] {
  const sidecars = (pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
  return [...sidecars, ...pod.spec.containers];
}

function toMs(t: ProbeContainerStatus['startedAt']): number | undefined {
  if (t === undefined || t === null) return undefined;
  const ms = t instanceof Date ? t.getTime() : typeof t === 'number' ? t : Date.parse(t);
  return Number.isFinite(ms) ? ms : undefined;
}
