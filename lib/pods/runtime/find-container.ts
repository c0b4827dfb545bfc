// Which container an operation on a pod (exec, logs, attach) addresses, checked the way the API
// server and kubelet check it, with the Status each failure answers.
import type { CriClient } from '#lib/cri/client.ts';
import { badRequest, notFound, StatusError, unavailable } from '#lib/kube/status.ts';
import type { ContainerStatus, Pod } from '#lib/kube/types.ts';
import type { Store } from '#lib/store/index.ts';
import { CONTAINER_NAME, POD_UID } from './labels.ts';
import { newestFirst } from './view.ts';

/** The annotation kubectl reads to pick a pod's default container. */
export const DEFAULT_CONTAINER_ANNOTATION = 'kubectl.kubernetes.io/default-container';

/** A running instance of a pod's container. */
export interface RunningContainer {
  pod: Pod;
  /** The container's name in the pod spec. */
  container: string;
  /** The runtime's id of the running instance. */
  containerId: string;
}

/** The runtime, or the 503 Status an operation answers on a node without one. */
export function requireRuntime(cri: CriClient | undefined): CriClient {
  if (!cri)
    throw unavailable('no container runtime is configured on this node (outpost serve --runtime-endpoint)');
  return cri;
}

/** The pod from the metabase, or the 404 Status. */
export function findPod(store: Store, namespace: string, name: string): Pod {
  const pod = store.pods.get(namespace, name);
  if (!pod) throw notFound('pods', name);
  return pod;
}

/** A pod's container names as the API server lists them: containers, then init containers. */
export function containerNames(pod: Pod): { containers: string[]; init: string[] } {
  return {
    containers: pod.spec.containers.map((c) => c.name),
    init: (pod.spec.initContainers ?? []).map((c) => c.name),
  };
}

/**
 * The container a request names (any app or init container), else the one the
 * `kubectl.kubernetes.io/default-container` annotation names, else the only one; otherwise the
 * 400 Status the API server answers (its messages, Go's `[a b]` list format included).
 */
export function resolveContainer(pod: Pod, requested?: string): string {
  const name = pod.metadata.name ?? '';
  const { containers, init } = containerNames(pod);
  if (requested) {
    if (!containers.includes(requested) && !init.includes(requested)) {
      throw badRequest(`container ${requested} is not valid for pod ${name}`, { name, kind: 'pods' });
    }
    return requested;
  }
  const annotated = pod.metadata.annotations?.[DEFAULT_CONTAINER_ANNOTATION];
  if (annotated && containers.includes(annotated)) return annotated;
  if (containers.length === 1) return containers[0]!;
  if (containers.length === 0) throw badRequest(`a container name must be specified for pod ${name}`);
  const initPart = init.length ? ` or one of the init containers: [${init.join(' ')}]` : '';
  throw badRequest(
    `a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]${initPart}`,
    { name, kind: 'pods' },
  );
}

/** Why the metabase says a container is not running (`CrashLoopBackOff`, `Completed`), if it knows. */
function stateReason(status: ContainerStatus | undefined): string | undefined {
  const s = status?.state;
  return s?.waiting?.reason ?? s?.terminated?.reason ?? (s?.terminated ? 'Terminated' : undefined);
}

/**
 * The running instance of `container` in `pod`, found on the runtime by the kubelet labels (pod
 * uid and container name); 409 Conflict when none runs, 503 when the runtime cannot be reached
 * or `signal` (the agent's shutdown) cancelled the call.
 */
export async function runningInstance(
  cri: CriClient,
  pod: Pod,
  container: string,
  signal?: AbortSignal,
): Promise<RunningContainer> {
  const filter = {
    labelSelector: { [POD_UID]: pod.metadata.uid ?? '', [CONTAINER_NAME]: container },
    state: { state: 'CONTAINER_RUNNING' as const },
  };
  const running = await cri.listContainers(filter, signal);
  const newest = running.sort(newestFirst)[0];
  if (newest) return { pod, container, containerId: newest.id };
  const podName = pod.metadata.name ?? '';
  const statuses = [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])];
  const reason = stateReason(statuses.find((s) => s.name === container));
  throw new StatusError(
    409,
    'Conflict',
    `container ${container} is not running in pod ${podName}${reason ? ` (${reason})` : ''}`,
    { name: podName, kind: 'pods' },
  );
}

/**
 * Everything an operation on a running container checks, in the API server's order: the pod
 * (404) and the container name (400) from the metabase, then the runtime (503 when missing or
 * down) for a running instance (409 when none).
 */
export async function findRunningContainer(
  deps: { store: Store; cri?: CriClient | undefined; shutdown?: AbortSignal | undefined },
  namespace: string,
  name: string,
  container?: string,
): Promise<RunningContainer> {
  const pod = findPod(deps.store, namespace, name);
  const resolved = resolveContainer(pod, container);
  return runningInstance(requireRuntime(deps.cri), pod, resolved, deps.shutdown);
}
