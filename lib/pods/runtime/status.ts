import type { Container as CriContainer, ContainerStatus as CriStatus } from '#lib/cri/types.ts';
import type {
  Container,
  ContainerState,
  ContainerStatus,
  Pod,
  PodCondition,
  PodStatus,
} from '#lib/kube/types.ts';
import { nanosToMs, nanosToTime } from './view.ts';

/** Why a container is waiting, when the manager knows better than the runtime (backoff, pull errors). */
export interface Waiting {
  reason: string;
  message?: string;
}

/** One container's instances in the current sandbox, newest first, with their runtime statuses. */
export interface ContainerView {
  spec: Container;
  current?: { c: CriContainer; s: CriStatus } | undefined;
  previous?: { c: CriContainer; s: CriStatus } | undefined;
  /** Restart count of the current instance (io.kubernetes.container.restartCount). */
  restartCount: number;
  waiting?: Waiting | undefined;
  ready: boolean;
  started: boolean;
}

export interface StatusInput {
  pod: Pod;
  previous: PodStatus | undefined;
  sandboxReady: boolean;
  init: ContainerView[];
  app: ContainerView[];
  hostIP: string;
  podIP: string;
  now: number;
  /**
   * The pod is being removed and every container was stopped: its last status ends in a terminal
   * phase (Succeeded when every container exited 0, else Failed), as today's kubelet reports a
   * deleted pod before its final DELETE.
   */
  terminal?: boolean;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

function terminated(v: { c: CriContainer; s: CriStatus }): ContainerState {
  const { s } = v;
  return {
    terminated: {
      exitCode: s.exitCode,
      reason: s.reason || (s.exitCode === 0 ? 'Completed' : 'Error'),
      ...(s.message ? { message: s.message } : {}),
      ...(nanosToTime(s.startedAt) ? { startedAt: nanosToTime(s.startedAt)! } : {}),
      ...(nanosToTime(s.finishedAt) ? { finishedAt: nanosToTime(s.finishedAt)! } : {}),
      containerID: `containerd://${s.id}`,
    },
  };
}

/** The v1 ContainerStatus of one container, as kubelet reports it. */
export function containerStatus(v: ContainerView, defaultWaiting: string): ContainerStatus {
  const cur = v.current;
  let state: ContainerState;
  let lastState: ContainerState = {};
  if (!cur) state = { waiting: v.waiting ?? { reason: defaultWaiting } };
  else if (cur.s.state === 'CONTAINER_RUNNING') {
    state = { running: { startedAt: nanosToTime(cur.s.startedAt) ?? iso(nanosToMs(cur.s.createdAt)) } };
    if (v.previous?.s.state === 'CONTAINER_EXITED') lastState = terminated(v.previous);
  } else if (cur.s.state === 'CONTAINER_EXITED') {
    if (v.waiting) {
      state = { waiting: v.waiting };
      lastState = terminated(cur);
    } else {
      state = terminated(cur);
      if (v.previous?.s.state === 'CONTAINER_EXITED') lastState = terminated(v.previous);
    }
  } else state = { waiting: v.waiting ?? { reason: 'ContainerCreating' } };
  const status: ContainerStatus = {
    name: v.spec.name,
    state,
    lastState,
    ready: v.ready,
    restartCount: v.restartCount,
    image: v.spec.image ?? '',
    imageID: cur?.s.imageRef ?? '',
    started: v.started,
  };
  if (cur) status.containerID = `containerd://${cur.s.id}`;
  return status;
}

const succeeded = (s: ContainerStatus) => s.state?.terminated?.exitCode === 0;

/** kubelet's getPhase over the container statuses. */
export function podPhase(
  pod: Pod,
  init: ContainerStatus[],
  app: ContainerStatus[],
  terminal = false,
): NonNullable<PodStatus['phase']> {
  const policy = pod.spec.restartPolicy ?? 'Always';
  const initDone = init.every(succeeded);
  if (!initDone) {
    const failedInit = init.some((s) => s.state?.terminated && s.state.terminated.exitCode !== 0);
    return failedInit && policy === 'Never' ? 'Failed' : 'Pending';
  }
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let ok = 0;
  for (const s of app) {
    if (s.state?.running) running++;
    else if (s.state?.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) ok++;
    } else if (s.state?.waiting && s.lastState?.terminated) stopped++;
    else waiting++;
  }
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (terminal) return stopped === ok ? 'Succeeded' : 'Failed';
    if (policy === 'Always') return 'Running';
    if (stopped === ok) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

/** BestEffort, Burstable or Guaranteed, from the containers' requests and limits. */
export function qosClass(pod: Pod): string {
  const containers = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  type Res = { requests?: Record<string, string>; limits?: Record<string, string> };
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const r = (c.resources ?? {}) as Res;
    const req = { ...(r.limits ?? {}), ...(r.requests ?? {}) };
    if (Object.keys(r.requests ?? {}).length || Object.keys(r.limits ?? {}).length) any = true;
    for (const k of ['cpu', 'memory']) if (!r.limits?.[k] || req[k] !== r.limits[k]) guaranteed = false;
  }
  return !any ? 'BestEffort' : guaranteed ? 'Guaranteed' : 'Burstable';
}

function condition(
  prev: PodStatus | undefined,
  now: number,
  type: string,
  ok: boolean,
  reason?: string,
  message?: string,
): PodCondition {
  const status = ok ? 'True' : 'False';
  const old = prev?.conditions?.find((c) => c.type === type);
  const c: PodCondition = {
    type,
    status,
    lastProbeTime: null,
    lastTransitionTime: old && old.status === status ? (old.lastTransitionTime ?? iso(now)) : iso(now),
  };
  if (!ok && reason) c.reason = reason;
  if (!ok && message) c.message = message;
  return c;
}

/** The pod's full status from what the runtime and the probes say. */
export function computeStatus(i: StatusInput): PodStatus {
  const initWaiting = i.sandboxReady ? 'PodInitializing' : 'PodInitializing';
  const init = i.init.map((v) => containerStatus(v, initWaiting));
  const initDone = init.every(succeeded);
  const app = i.app.map((v) =>
    containerStatus(v, initDone && i.sandboxReady ? 'ContainerCreating' : 'PodInitializing'),
  );
  const phase = podPhase(i.pod, init, app, i.terminal);
  const unready = app.filter((s) => !s.ready).map((s) => s.name);
  const incompleteInit = init.filter((s) => !succeeded(s)).map((s) => s.name);
  const completed = phase === 'Succeeded' || phase === 'Failed';
  const gates = (i.pod.spec.readinessGates ?? []).map((g) => g.conditionType);
  const gateOk = gates.every((t) => i.previous?.conditions?.find((c) => c.type === t)?.status === 'True');
  const containersReady = unready.length === 0;
  const notReadyReason = completed ? 'PodCompleted' : 'ContainersNotReady';
  const notReadyMsg = completed ? undefined : `containers with unready status: [${unready.join(' ')}]`;
  const conditions = [
    condition(i.previous, i.now, 'PodReadyToStartContainers', i.sandboxReady),
    condition(
      i.previous,
      i.now,
      'Initialized',
      initDone,
      completed ? 'PodCompleted' : 'ContainersNotInitialized',
      completed ? undefined : `containers with incomplete status: [${incompleteInit.join(' ')}]`,
    ),
    condition(
      i.previous,
      i.now,
      'Ready',
      containersReady && gateOk && !completed,
      notReadyReason,
      gateOk ? notReadyMsg : 'the status of pod readiness gate is not "True"',
    ),
    condition(
      i.previous,
      i.now,
      'ContainersReady',
      containersReady && !completed,
      notReadyReason,
      notReadyMsg,
    ),
    condition(i.previous, i.now, 'PodScheduled', true),
  ];
  const status: PodStatus = {
    phase,
    conditions,
    hostIP: i.hostIP,
    hostIPs: [{ ip: i.hostIP }],
    startTime: i.previous?.startTime ?? iso(i.now),
    qosClass: qosClass(i.pod),
    containerStatuses: app,
  };
  if (i.sandboxReady && i.podIP) {
    status.podIP = i.podIP;
    status.podIPs = [{ ip: i.podIP }];
  }
  if (init.length) status.initContainerStatuses = init;
  return status;
}
