// Which container a log request is about, and where the runtime keeps that container's log.
import { lstat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import type { CriClient } from '#lib/cri/client.ts';
import { badRequest, internal, isStatusError } from '#lib/kube/status.ts';
import type { ContainerStatus, Pod } from '#lib/kube/types.ts';
import { CONTAINER_NAME, POD_UID } from '../runtime/labels.ts';
import { newestFirst } from '../runtime/view.ts';

/** The annotation kubectl reads to pick a pod's default container. */
export const DEFAULT_CONTAINER = 'kubectl.kubernetes.io/default-container';

/** A located container log. */
export interface LogSource {
  containerId: string;
  /** The current log file as the runtime reports it (ContainerStatus.logPath); empty when it keeps none. */
  path: string;
  /** Created or running: the file may still grow. */
  running: boolean;
}

/** Every container name of a pod in the API server's order: init containers, then containers. */
export function containerNames(pod: Pod): string[] {
  return [...(pod.spec.initContainers ?? []), ...pod.spec.containers].map((c) => c.name);
}

/**
 * The container a log request names, else the one kubectl's default-container annotation names,
 * else the only one; otherwise the 400 Status the API server answers.
 */
export function logContainer(pod: Pod, requested: string | undefined): string {
  const name = pod.metadata.name ?? '';
  const names = containerNames(pod);
  if (requested) {
    if (!names.includes(requested)) throw badRequest(`container ${requested} is not valid for pod ${name}`);
    return requested;
  }
  const annotated = pod.metadata.annotations?.[DEFAULT_CONTAINER];
  if (annotated && names.includes(annotated)) return annotated;
  const [only, ...more] = pod.spec.containers;
  if (only && more.length === 0) return only.name;
  if (!only) throw badRequest(`a container name must be specified for pod ${name}`);
  // Go's %v of a []string: `[a b]`.
  throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${names.join(' ')}]`);
}

const bareId = (id: string | undefined) => id?.replace(/^[a-z0-9-]+:\/\//, '') || undefined;

/**
 * The log of a container's current instance (the newest the runtime holds for the pod uid and
 * container name) or, with `previous`, of the one before it, as kubelet picks them: the metabase
 * status (lastState.terminated, whose instance is the newest one while a restart is pending) first,
 * the runtime's own list second.
 */
export async function locateLog(
  cri: CriClient,
  pod: Pod,
  container: string,
  previous: boolean,
  signal?: AbortSignal,
): Promise<LogSource> {
  const uid = pod.metadata.uid ?? '';
  const podName = pod.metadata.name ?? '';
  const filter = { labelSelector: { [POD_UID]: uid, [CONTAINER_NAME]: container } };
  const listed = (await cri.listContainers(filter, signal)).sort(newestFirst);
  const st = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].find(
    (s) => s.name === container,
  );
  const last = bareId(st?.lastState?.terminated?.containerID);
  const known = (id: string | undefined) => id && (listed.length === 0 || listed.some((c) => c.id === id));
  const id = previous
    ? known(last)
      ? last
      : listed[1]?.id
    : (listed[0]?.id ?? bareId(st?.containerID) ?? bareId(st?.state?.terminated?.containerID) ?? last);
  const missing = () =>
    previous
      ? badRequest(`previous terminated container "${container}" in pod "${podName}" not found`)
      : waitingError(container, podName, st);
  if (!id) throw missing();
  let status: Awaited<ReturnType<CriClient['containerStatus']>>;
  try {
    status = await cri.containerStatus(id, signal);
  } catch (e) {
    if (isStatusError(e) && e.code === 404) throw missing(); // removed since (garbage collection)
    throw e;
  }
  return {
    containerId: id,
    path: status.logPath ? await checkedPath(status.logPath, pod, container) : '',
    running: status.state === 'CONTAINER_RUNNING' || status.state === 'CONTAINER_CREATED',
  };
}

/** Whether a container may still write to its log; a runtime that cannot be asked counts as yes. */
export async function stillRunning(cri: CriClient, containerId: string): Promise<boolean> {
  try {
    const s = await cri.containerStatus(containerId);
    return s.state === 'CONTAINER_RUNNING' || s.state === 'CONTAINER_CREATED';
  } catch (e) {
    return !(isStatusError(e) && e.code === 404);
  }
}

// kubelet's answers for a container with no instance to read (validateContainerLogStatus).
function waitingError(container: string, pod: string, st: ContainerStatus | undefined) {
  const reason = st?.state?.waiting?.reason;
  if (!reason)
    return badRequest(`container "${container}" in pod "${pod}" is waiting to start - no logs yet`);
  const why =
    reason === 'ErrImagePull'
      ? "image can't be pulled"
      : reason === 'ImagePullBackOff'
        ? 'trying and failing to pull image'
        : reason;
  return badRequest(`container "${container}" in pod "${pod}" is waiting to start: ${why}`);
}

/**
 * The runtime's log path, once it is known to be `<pod log dir>/<container>/<N>.log` with the pod
 * log directory named `NAMESPACE_NAME_UID` as Outpost (and kubelet) create it, and with no link in
 * those last levels: nothing a pod or a request names can lead the reader elsewhere.
 */
async function checkedPath(logPath: string, pod: Pod, container: string): Promise<string> {
  const path = resolve(logPath);
  const containerDir = dirname(path);
  const podDir = dirname(containerDir);
  const { namespace, name, uid } = pod.metadata;
  const ok =
    isAbsolute(logPath) &&
    path === logPath.replace(/\/+$/, '') &&
    /^\d+\.log$/.test(basename(path)) &&
    basename(containerDir) === container &&
    basename(podDir) === `${namespace}_${name}_${uid}` &&
    (await isRealDir(containerDir)) &&
    (await isRealDir(podDir));
  if (!ok) throw internal(`log path ${logPath} of container ${container} is outside its pod's log directory`);
  return path;
}

async function isRealDir(dir: string): Promise<boolean> {
  try {
    return (await lstat(dir)).isDirectory();
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT'; // not created yet: nothing to follow there either
  }
}
