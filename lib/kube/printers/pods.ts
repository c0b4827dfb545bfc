// The pod Table exactly as kube-apiserver renders it (pkg/printers/internalversion printPod): kubectl
// prints these cells verbatim, so the STATUS and RESTARTS logic has to match upstream case by case.
import { humanDuration, parseTimestamp, translateTimestampSince } from '../duration.ts';
import {
  AGE_COLUMN,
  column,
  NAME_COLUMN,
  type RowCells,
  type Table,
  type TableRowCondition,
  type ToTableOptions,
  toTable,
} from '../table.ts';
import type { Container, ContainerStatus, Pod, PodCondition } from '../types.ts';

/** The pod columns, with upstream's types and descriptions; the last four show with `-o wide`. */
export const podColumns = [
  NAME_COLUMN,
  column('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
  column('Status', 'string', 'The aggregate status of the containers in this pod.'),
  column(
    'Restarts',
    'string',
    'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
  ),
  AGE_COLUMN,
  column(
    'IP',
    'string',
    'podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.',
    { priority: 1 },
  ),
  column(
    'Node',
    'string',
    'NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename',
    { priority: 1 },
  ),
  column(
    'Nominated Node',
    'string',
    'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.',
    { priority: 1 },
  ),
  column(
    'Readiness Gates',
    'string',
    'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates',
    { priority: 1 },
  ),
];

const succeeded: TableRowCondition[] = [
  { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
];
const failed: TableRowCondition[] = [
  { type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' },
];

// A sidecar: an init container with restartPolicy Always (KEP-753).
const isRestartable = (c: Container | undefined): boolean => c?.restartPolicy === 'Always';

const conditionTrue = (conditions: PodCondition[] | undefined, type: string): boolean =>
  conditions?.find((c) => c.type === type)?.status === 'True';

/** Tracks the newest lastState.terminated.finishedAt, the moment of the latest restart. */
const later = (current: number | undefined, cs: ContainerStatus): number | undefined => {
  const finished = parseTimestamp(cs.lastState?.terminated?.finishedAt);
  return finished !== undefined && (current === undefined || current < finished) ? finished : current;
};

/** READY, STATUS and RESTARTS of a pod, computed as upstream printPod does. */
export function podSummary(pod: Pod, now: number): { ready: string; status: string; restarts: string } {
  const status = pod.status ?? {};
  const initSpecs = pod.spec.initContainers ?? [];
  const phase = status.phase ?? '';
  let reason: string = status.reason || phase;
  if (status.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'SchedulingGated')) {
    reason = 'SchedulingGated';
  }

  let total = pod.spec.containers.length;
  let ready = 0;
  let restarts = 0;
  let lastRestart: number | undefined;
  let sidecarRestarts = 0;
  let lastSidecarRestart: number | undefined;
  const initByName = new Map(initSpecs.map((c) => [c.name, c]));
  for (const c of initSpecs) if (isRestartable(c)) total++;

  let initializing = false;
  const initStatuses = status.initContainerStatuses ?? [];
  for (const [i, cs] of initStatuses.entries()) {
    restarts += cs.restartCount;
    lastRestart = later(lastRestart, cs);
    const sidecar = isRestartable(initByName.get(cs.name));
    if (sidecar) {
      sidecarRestarts += cs.restartCount;
      lastSidecarRestart = later(lastSidecarRestart, cs);
    }
    const terminated = cs.state?.terminated;
    const waiting = cs.state?.waiting;
    if (terminated && terminated.exitCode === 0) continue;
    if (sidecar && cs.started) {
      if (cs.ready) ready++;
      continue;
    }
    if (terminated) {
      // initialization failed
      if (terminated.reason) reason = `Init:${terminated.reason}`;
      else if (terminated.signal) reason = `Init:Signal:${terminated.signal}`;
      else reason = `Init:ExitCode:${terminated.exitCode}`;
    } else if (waiting?.reason && waiting.reason !== 'PodInitializing') {
      reason = `Init:${waiting.reason}`;
    } else {
      reason = `Init:${i}/${initSpecs.length}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || conditionTrue(status.conditions, 'Initialized')) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    // Walked backwards, so the first container's state has the last word, as upstream.
    const statuses = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i]!;
      restarts += cs.restartCount;
      lastRestart = later(lastRestart, cs);
      const { waiting, terminated, running } = cs.state ?? {};
      if (waiting?.reason) reason = waiting.reason;
      else if (terminated?.reason) reason = terminated.reason;
      else if (terminated)
        reason = terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode}`;
      else if (cs.ready && running) {
        hasRunning = true;
        ready++;
      }
    }
    // A pod whose first container completed while another still runs is not Completed.
    if (reason === 'Completed' && hasRunning) {
      reason = status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
        ? 'Running'
        : 'NotReady';
    }
  }

  if (pod.metadata.deletionTimestamp && status.reason === 'NodeLost') reason = 'Unknown';
  else if (pod.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed')
    reason = 'Terminating';

  let restartsText = String(restarts);
  if (restarts !== 0 && lastRestart !== undefined) {
    restartsText = `${restarts} (${humanDuration(now - lastRestart)} ago)`;
  }
  return { ready: `${ready}/${total}`, status: reason, restarts: restartsText };
}

/** One pod's cells (all nine: the API server always renders wide) and its row conditions. */
export function printPod(pod: Pod, now: number): RowCells {
  const { ready, status, restarts } = podSummary(pod, now);
  const podIP = pod.status?.podIPs?.[0]?.ip || pod.status?.podIP || '<none>';
  let gates = '<none>';
  const readinessGates = pod.spec.readinessGates ?? [];
  if (readinessGates.length > 0) {
    // Only the first condition of a type counts, as upstream.
    const trueGates = readinessGates.filter((g) => conditionTrue(pod.status?.conditions, g.conditionType));
    gates = `${trueGates.length}/${readinessGates.length}`;
  }
  const row: RowCells = {
    cells: [
      pod.metadata.name ?? '',
      ready,
      status,
      restarts,
      translateTimestampSince(pod.metadata.creationTimestamp, now),
      podIP,
      pod.spec.nodeName || '<none>',
      pod.status?.nominatedNodeName || '<none>',
      gates,
    ],
  };
  if (pod.status?.phase === 'Succeeded') row.conditions = succeeded;
  if (pod.status?.phase === 'Failed') row.conditions = failed;
  return row;
}

/** A pod Table as `GET .../pods` answers it for `Accept: ...;as=Table;g=meta.k8s.io;v=v1`. */
export function podTable(pods: readonly Pod[], now: number, opts: ToTableOptions = {}): Table {
  return toTable(podColumns, pods, (pod) => printPod(pod, now), opts);
}
