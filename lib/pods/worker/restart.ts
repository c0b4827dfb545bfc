// Restarting a pod the way KubeEdge's MetaServer does: stop its running containers through CRI
// (never the sandbox) and let the lifecycle manager start them again. Unlike upstream, the stops are
// registered first (restart-requests.ts), so the manager restarts them at once whatever the restart
// policy and back-off, and every failure is a Status with the right code.
import type { CriClient } from '#lib/cri/client.ts';
import { conflict, internal, isStatusError, notFound, StatusError } from '#lib/kube/status.ts';
import type { Logger } from '#lib/log.ts';
import type { Store } from '#lib/store/index.ts';
import { CONTAINER_NAME, POD_NAME, POD_NAMESPACE, POD_UID } from '../runtime/labels.ts';
import type { RestartRequests } from './restart-requests.ts';

/** Seconds between the stop signal and SIGKILL, as upstream's restart uses. */
export const RESTART_STOP_TIMEOUT_SECONDS = 3;

export interface RestartDeps {
  store: Store;
  log: Logger;
  cri?: CriClient | undefined;
  restarts?: RestartRequests | undefined;
  /**
   * The agent's shutdown signal: cancels the restart's runtime calls (the agent stopping), and
   * nothing else does, so a client that goes away does not leave a restart halfway.
   */
  shutdown?: AbortSignal | undefined;
}

/** What a restart stopped: the containers that will be started again. */
export interface RestartResult {
  namespace: string;
  name: string;
  uid: string;
  /** The stopped containers: name and CRI container ID (no `containerd://` prefix). */
  stopped: { container: string; id: string }[];
}

/**
 * Stops the running containers of one pod so that the lifecycle manager starts them again; records
 * a `Restarted` event. 404 unknown pod, 409 nothing running or terminating, 503 no runtime.
 */
export async function restartPod(d: RestartDeps, namespace: string, name: string): Promise<RestartResult> {
  const rec = d.store.pods.record(namespace, name);
  if (!rec) throw notFound('pods', name);
  if (rec.desired.metadata.deletionTimestamp)
    throw conflict(`pods "${name}" is terminating and cannot be restarted`, { name, kind: 'pods' });
  const { cri } = d;
  if (!cri) {
    const message = `pods "${name}" cannot be restarted: no container runtime is configured`;
    throw new StatusError(503, 'ServiceUnavailable', message, { name, kind: 'pods' });
  }
  const { shutdown } = d;
  // The runtime's own words (e.g. a missing socket) go to the cause; the message stays stable. A
  // call the agent's shutdown cancelled is a 503 too, saying so.
  const down = (err: unknown) => {
    if (!isStatusError(err) || err.code !== 503) return err;
    const [why, reason] = shutdown?.aborted
      ? ['the agent is stopping', 'Cancelled']
      : [`container runtime at ${cri.endpoint} is unavailable`, 'RuntimeUnavailable'];
    return new StatusError(503, 'ServiceUnavailable', `pods "${name}" cannot be restarted: ${why}`, {
      name,
      kind: 'pods',
      causes: [{ reason, message: err.message }],
    });
  };
  const running = await cri
    .listContainers(
      {
        labelSelector: { [POD_NAME]: name, [POD_NAMESPACE]: namespace, [POD_UID]: rec.uid },
        state: { state: 'CONTAINER_RUNNING' },
      },
      shutdown,
    )
    .catch((err: unknown) => {
      throw down(err);
    });
  if (running.length === 0) {
    throw conflict(`pods "${name}" cannot be restarted: none of its containers is running`, {
      name,
      kind: 'pods',
    });
  }
  d.restarts?.mark(running.map((c) => c.id));
  const results = await Promise.allSettled(
    running.map((c) => cri.stopContainer(c.id, RESTART_STOP_TIMEOUT_SECONDS, shutdown)),
  );
  const stopped: RestartResult['stopped'] = [];
  const failures: StatusError[] = [];
  results.forEach((r, i) => {
    const c = running[i]!;
    const container = c.labels[CONTAINER_NAME] ?? c.metadata?.name ?? '';
    if (r.status === 'fulfilled') {
      stopped.push({ container, id: c.id });
      return;
    }
    d.restarts?.unmark(c.id);
    // Gone between the list and the stop: another actor removed it, there is nothing left to stop.
    if (isStatusError(r.reason) && r.reason.code === 404) return;
    // Cancelled by the agent stopping: not a failure of the runtime, the next start syncs the pod.
    if (shutdown?.aborted)
      d.log.info({ pod: `${namespace}/${name}`, container }, 'restart cancelled: the agent is stopping');
    else
      d.log.warn(
        { err: r.reason, pod: `${namespace}/${name}`, container },
        'restart: stopping a container failed',
      );
    const err = down(r.reason);
    failures.push(isStatusError(err) ? err : internal(String(err)));
  });
  if (stopped.length > 0) {
    const names = stopped.map((s) => s.container).join(', ');
    d.store.events.record(
      { kind: 'Pod', namespace, name, uid: rec.uid },
      'Normal',
      'Restarted',
      `Restart requested: stopped container${stopped.length > 1 ? 's' : ''} ${names}`,
      'outpost',
    );
  }
  if (failures.length > 0) throw failures.sort((a, b) => b.code - a.code)[0]!;
  if (stopped.length === 0) {
    throw conflict(`pods "${name}" cannot be restarted: none of its containers is running`, {
      name,
      kind: 'pods',
    });
  }
  return { namespace, name, uid: rec.uid, stopped };
}

/** KubeEdge's `RestartResponse` (note the capital L, as upstream spells it). */
export interface RestartResponse {
  errMessages: string[];
  LogMessages: string[];
}

/**
 * Restarts several pods of one namespace, as KubeEdge's `POST .../pods/restart` does: the stopped
 * container IDs go to `LogMessages`, each failure's message to `errMessages`. Unlike upstream,
 * `code` is honest: 200 only when every pod restarted, else the highest failure code.
 */
export async function restartPods(
  d: RestartDeps,
  namespace: string,
  names: readonly string[],
): Promise<{ code: number; response: RestartResponse }> {
  const unique = [...new Set(names)];
  const results = await Promise.allSettled(unique.map((name) => restartPod(d, namespace, name)));
  const response: RestartResponse = { errMessages: [], LogMessages: [] };
  let code = 200;
  for (const r of results) {
    if (r.status === 'fulfilled') {
      response.LogMessages.push(...r.value.stopped.map((s) => s.id));
      continue;
    }
    if (!isStatusError(r.reason)) throw r.reason;
    response.errMessages.push(r.reason.message);
    code = Math.max(code === 200 ? 0 : code, r.reason.code);
  }
  return { code, response };
}
