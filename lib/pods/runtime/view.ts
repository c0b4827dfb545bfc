import type { CriClient } from '#lib/cri/client.ts';
import type { Container, ContainerStatus, PodSandbox } from '#lib/cri/types.ts';
import { CONTAINER_NAME, POD_UID } from './labels.ts';

/** What the runtime holds for one pod: its sandboxes and containers, newest first. */
export interface RuntimePod {
  uid: string;
  sandboxes: PodSandbox[];
  containers: Container[];
}

/** Sort order of CRI objects by `createdAt` (int64 nanoseconds as a string), newest first. */
export const newestFirst = <T extends { createdAt: string }>(a: T, b: T): number => {
  const d = BigInt(b.createdAt) - BigInt(a.createdAt);
  return d > 0n ? 1 : d < 0n ? -1 : 0;
};

/** Groups the runtime's sandboxes and containers by the pod uid label kubelet-style pods carry. */
export function groupByPod(sandboxes: PodSandbox[], containers: Container[]): Map<string, RuntimePod> {
  const pods = new Map<string, RuntimePod>();
  const of = (uid: string) => {
    let p = pods.get(uid);
    if (!p) {
      p = { uid, sandboxes: [], containers: [] };
      pods.set(uid, p);
    }
    return p;
  };
  for (const s of sandboxes) {
    const uid = s.labels[POD_UID];
    if (uid) of(uid).sandboxes.push(s);
  }
  for (const c of containers) {
    const uid = c.labels[POD_UID];
    if (uid) of(uid).containers.push(c);
  }
  for (const p of pods.values()) {
    p.sandboxes.sort(newestFirst);
    p.containers.sort(newestFirst);
  }
  return pods;
}

/** The instances of one container of a pod, newest first. */
export const instances = (rt: RuntimePod | undefined, name: string): Container[] =>
  rt ? rt.containers.filter((c) => (c.labels[CONTAINER_NAME] ?? c.metadata?.name) === name) : [];

/** A fingerprint of a pod's runtime state: it changes whenever a container or sandbox changes state. */
export const fingerprint = (rt: RuntimePod | undefined): string =>
  rt
    ? [...rt.sandboxes.map((s) => `${s.id}:${s.state}`), ...rt.containers.map((c) => `${c.id}:${c.state}`)]
        .sort()
        .join(',')
    : '';

/**
 * Container statuses by id. An exited container never changes again, so its status is cached
 * until the container is removed.
 */
export class StatusCache {
  readonly #done = new Map<string, ContainerStatus>();

  /** `signal` cancels the ContainerStatus calls in flight (the agent stopping). */
  constructor(
    private readonly cri: CriClient,
    private readonly signal?: AbortSignal,
  ) {}

  async get(c: Container): Promise<ContainerStatus> {
    const cached = this.#done.get(c.id);
    if (cached) return cached;
    const status = await this.cri.containerStatus(c.id, this.signal);
    if (status.state === 'CONTAINER_EXITED') this.#done.set(c.id, status);
    return status;
  }

  forget(id: string): void {
    this.#done.delete(id);
  }
}

/** Nanoseconds since the epoch (CRI int64 as a string) to an RFC 3339 timestamp, or undefined for 0. */
export function nanosToTime(ns: string | undefined): string | undefined {
  if (!ns || ns === '0') return undefined;
  return new Date(Number(BigInt(ns) / 1_000_000n)).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** Nanoseconds since the epoch to milliseconds. */
export const nanosToMs = (ns: string | undefined): number =>
  ns && ns !== '0' ? Number(BigInt(ns) / 1_000_000n) : 0;
