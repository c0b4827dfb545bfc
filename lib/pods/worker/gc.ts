import type { CriClient } from '#lib/cri/client.ts';
import type { Logger } from '#lib/log.ts';
import { removeContainerLogs } from '../logs/rotate.ts';
import { CONTAINER_NAME, MANAGED_BY, POD_NAME, POD_NAMESPACE } from '../runtime/labels.ts';
import type { RuntimePod } from '../runtime/view.ts';

/** Dead instances kept per container (the previous one serves `logs --previous`). */
export const DEAD_PER_CONTAINER = 1;

export interface GcInput {
  cri: CriClient;
  log: Logger;
  runtime: Map<string, RuntimePod>;
  /** Uids of every pod in the metabase. */
  known: Set<string>;
  managedBy: string;
  onRemoved?: (containerId: string) => void;
  /** The agent's: cancels the runtime calls in flight and ends the collection (the agent stopping). */
  signal?: AbortSignal | undefined;
}

const warned = new Set<string>();

/**
 * Removes dead containers beyond the per-container limit and old sandboxes of known pods, and the
 * sandboxes of pods no longer in the metabase, but only those this metabase's Outpost created: an
 * empty or different metabase never deletes pods it finds; it logs them and leaves them.
 */
export async function collectGarbage(g: GcInput): Promise<void> {
  const { cri, log, signal } = g;
  for (const [uid, rt] of g.runtime) {
    // Stopping: what is left is collected after the next start; the calls would be cancelled at once.
    if (signal?.aborted) return;
    if (!g.known.has(uid)) {
      const ours = rt.sandboxes.some((s) => s.annotations[MANAGED_BY] === g.managedBy);
      const s0 = rt.sandboxes[0];
      const name = s0 ? `${s0.labels[POD_NAMESPACE]}/${s0.labels[POD_NAME]}` : uid;
      if (!ours || g.known.size === 0) {
        if (!warned.has(uid)) log.info({ uid, pod: name }, 'runtime pod not in the metabase: left alone');
        warned.add(uid);
        continue;
      }
      log.info({ uid, pod: name }, 'removing pod no longer in the metabase');
      for (const s of rt.sandboxes) {
        await cri.stopPodSandbox(s.id, signal).catch(() => {});
        await cri.removePodSandbox(s.id, signal).catch(() => {});
      }
      for (const c of rt.containers) g.onRemoved?.(c.id);
      continue;
    }
    // Dead instances beyond the limit, newest kept.
    const byName = new Map<string, number>();
    for (const c of rt.containers) {
      if (c.state !== 'CONTAINER_EXITED') continue;
      const name = c.labels[CONTAINER_NAME] ?? '';
      const seen = (byName.get(name) ?? 0) + 1;
      byName.set(name, seen);
      // The newest exited instance may be the current one (an init container that succeeded): keep one more.
      if (seen > DEAD_PER_CONTAINER + 1) {
        // Its log and rotated logs go with it (kubelet's log manager Clean, before RemoveContainer).
        const logPath = await cri.containerStatus(c.id, signal).then(
          (s) => s.logPath,
          () => '',
        );
        const removed = await cri.removeContainer(c.id, signal).then(
          () => true,
          (err) => log.debug({ err, id: c.id }, 'gc: remove container failed'),
        );
        if (removed && /\/\d+\.log$/.test(logPath)) removeContainerLogs(logPath);
        g.onRemoved?.(c.id);
      }
    }
    // Sandboxes other than the newest, once not ready and without containers.
    for (const s of rt.sandboxes.slice(1)) {
      if (
        s.state === 'SANDBOX_READY' ||
        rt.containers.some((c) => c.podSandboxId === s.id && c.state !== 'CONTAINER_EXITED')
      )
        continue;
      const dead = rt.containers.filter((c) => c.podSandboxId === s.id);
      if (dead.length > 0 && rt.containers.filter((c) => c.podSandboxId !== s.id).length === 0) continue; // keep for logs --previous
      // Stopped first: a sandbox that died without a stop (a power cut) still holds its pod IP.
      await cri.stopPodSandbox(s.id, signal).catch(() => {});
      await cri
        .removePodSandbox(s.id, signal)
        .catch((err) => log.debug({ err, id: s.id }, 'gc: remove sandbox failed'));
      for (const c of dead) g.onRemoved?.(c.id);
    }
  }
}
