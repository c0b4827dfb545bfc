// Container log rotation as kubelet's container log manager does it: a running container's log
// past the size limit is renamed to `N.log.<YYYYMMDD-hhmmss>` and the runtime is asked to reopen
// its log at the old path (CRI ReopenContainerLog); at most `maxFiles` files are kept per
// container, the current one included, and every rotated file but the newest is gzipped. The
// readers (read.ts) serve rotated files before the current one and follow across a rotation.
import { createReadStream, createWriteStream, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { CriClient } from '#lib/cri/client.ts';
import type { Logger } from '#lib/log.ts';
import { POD_UID } from '../runtime/labels.ts';
import { rotatedLogs } from './files.ts';

export interface LogRotationPolicy {
  /** Bytes past which a running container's log is rotated. */
  maxSize: number;
  /** Files kept per container, the current one included (at least 2). */
  maxFiles: number;
}

/** kubelet's rotated-file stamp (Go layout 20060102-150405), in UTC. */
export function rotationStamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

/** Rotates the logs of this agent's running pod containers; one `pass()` per monitor interval. */
export class ContainerLogRotator {
  readonly #cri: CriClient;
  readonly #policy: LogRotationPolicy;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #owns: (podUid: string) => boolean;

  constructor(o: {
    cri: CriClient;
    policy: LogRotationPolicy;
    log: Logger;
    /** Whether a pod is this agent's: another agent's containers on a shared runtime are left alone. */
    owns: (podUid: string) => boolean;
    now?: () => number;
  }) {
    this.#cri = o.cri;
    this.#owns = o.owns;
    this.#policy = o.policy;
    this.#log = o.log;
    this.#now = o.now ?? Date.now;
  }

  /**
   * Checks every running pod container once; one container's failure does not stop the others.
   * `signal` (the agent stopping) cancels the runtime calls and ends the pass.
   */
  async pass(signal?: AbortSignal): Promise<number> {
    const running = await this.#cri.listContainers({ state: { state: 'CONTAINER_RUNNING' } }, signal);
    let rotated = 0;
    for (const c of running) {
      const uid = c.labels[POD_UID];
      if (!uid || !this.#owns(uid)) continue;
      if (signal?.aborted) break;
      try {
        const { logPath } = await this.#cri.containerStatus(c.id, signal);
        if (logPath && (await this.rotate(c.id, logPath, signal))) rotated++;
      } catch (err) {
        if (signal?.aborted) break; // cancelled, not failed: the next pass after a start looks again
        this.#log.warn({ err, containerId: c.id }, 'container log rotation failed');
      }
    }
    return rotated;
  }

  /**
   * Rotates one container's log if it is past the size limit; true when it did. `signal` cancels
   * ReopenContainerLog: the file gets its name back, as after a failed reopen.
   */
  async rotate(containerId: string, path: string, signal?: AbortSignal): Promise<boolean> {
    const size = statSync(path, { throwIfNoEntry: false })?.size ?? 0;
    if (size < this.#policy.maxSize) return false;
    const target = `${path}.${rotationStamp(this.#now())}`;
    if (existsSync(target) || existsSync(`${target}.gz`)) return false; // rotated this second already
    // Room for the file about to be rotated: maxFiles - 2 older ones stay beside it and the current.
    const old = rotatedLogs(path); // oldest first
    const cut = Math.max(0, old.length - (this.#policy.maxFiles - 2));
    for (const f of old.slice(0, cut)) rmSync(f, { force: true });
    for (const f of old.slice(cut)) if (!f.endsWith('.gz')) await compress(f);
    renameSync(path, target);
    try {
      await this.#cri.reopenContainerLog(containerId, signal);
    } catch (e) {
      // The runtime still writes the renamed file: give it its name back, unless a new one exists.
      if (!existsSync(path)) renameSync(target, path);
      throw e;
    }
    this.#log.debug({ containerId, path, size, rotated: basename(target) }, 'container log rotated');
    return true;
  }
}

/** Gzips a rotated log beside itself (through a temporary file), then removes the original. */
async function compress(file: string): Promise<void> {
  const tmp = join(dirname(file), `.${basename(file)}.gz.tmp`);
  try {
    await pipeline(createReadStream(file), createGzip(), createWriteStream(tmp, { mode: 0o640 }));
    renameSync(tmp, `${file}.gz`);
    rmSync(file, { force: true });
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** Removes a container's log and its rotated files (kubelet's log manager Clean, before RemoveContainer). */
export function removeContainerLogs(path: string): void {
  if (!path) return;
  for (const f of rotatedLogs(path)) rmSync(f, { force: true });
  rmSync(path, { force: true });
}
