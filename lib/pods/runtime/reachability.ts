// The `outpost.io/RuntimeReachable` pod condition: whether the container runtime behind the pods
// answers. While it does not, the pods served from the metabase are the last known picture and
// the condition says so (status False, reason RuntimeUnavailable, a message naming the endpoint).
//
// The lifecycle manager owns the pod status and rewrites it whole; this condition rides along
// through PodStore.statusHook, which adds it to every status written (the manager's included), so
// the two writers never undo each other. On a change of reachability every pod of the node is
// rewritten once, in one transaction.
//
// After `unreachableGraceMs` (40 s, the node-monitor grace period after which a cluster marks the
// pods of an unreachable node not ready) the pods' Ready and ContainersReady conditions turn False
// with reason RuntimeUnreachable and no container counts as ready: what kubectl shows is no longer
// a picture of running containers. When the runtime answers again, `onRecovered` asks the
// lifecycle manager for the real status of every pod.
import { type Clock, systemClock, type Timer } from '#lib/clock.ts';
import type { PodCondition, PodStatus } from '#lib/kube/types.ts';
import type { Logger } from '#lib/log.ts';
import type { Store } from '#lib/store/index.ts';
import type { PodRecord } from '#lib/store/pods.ts';
import { qosClass } from './status.ts';

export const RUNTIME_REACHABLE = 'outpost.io/RuntimeReachable';
export const RUNTIME_UNAVAILABLE = 'RuntimeUnavailable';
export const RUNTIME_UNREACHABLE = 'RuntimeUnreachable';
export const UNREACHABLE_GRACE_MS = 40_000;

interface State {
  ok: boolean;
  since: number;
  message?: string | undefined;
  /** Unreachable for longer than the grace period: pods are shown not ready. */
  stale?: boolean;
}

export interface RuntimeReachabilityOptions {
  store: Store;
  nodeName: string;
  /** The CRI endpoint, named in the condition's message (it may change: a runtime found elsewhere). */
  endpoint: string | (() => string);
  /** Every endpoint watched for a runtime while none answers (named in the warning). */
  watching?: string[];
  now: () => number;
  log: Logger;
  /** Timers for the grace period; default the system clock. */
  clock?: Clock;
  /** How long the runtime may be unreachable before pods are shown not ready; default 40 s. */
  unreachableGraceMs?: number;
  /** The runtime answers again after the pods were shown not ready. */
  onRecovered?: () => void;
}

// The grace timer must not keep a process alive on its own.
const unrefClock: Clock = {
  ...systemClock,
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return t as unknown as Timer;
  },
};

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** Why the runtime did not answer, in a few words: the errno of the failed connect, if any. */
export function unreachableMessage(endpoint: string, err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const errno = /\b(ENOENT|ECONNREFUSED|EACCES|ETIMEDOUT|EPIPE|ECONNRESET)\b/.exec(text)?.[1];
  const why =
    errno === 'ENOENT'
      ? 'the socket does not exist'
      : errno
        ? `connect: ${errno}`
        : text.replace(/^container runtime at \S+ /, '').split('. ')[0];
  return `container runtime at ${endpoint} is unreachable (${why}); container states shown are the last known`;
}

/** Tracks whether the runtime answers and keeps every pod's RuntimeReachable condition in step. */
export class RuntimeReachability {
  readonly #o: RuntimeReachabilityOptions;
  #state: State | undefined;
  #graceTimer: Timer | undefined;

  constructor(o: RuntimeReachabilityOptions) {
    this.#o = o;
    o.store.pods.statusHook = (status, stored) => this.decorate(status, stored);
    // A pod added while the runtime is down: no lifecycle manager writes its status, so this does.
    o.store.pods.addedHook = (uid) => {
      const rec = this.#state && !this.#state.ok ? o.store.pods.recordByUid(uid) : undefined;
      if (rec && (rec.desired.spec.nodeName ?? '') === o.nodeName) this.#write([rec]);
    };
  }

  /** True or false once the runtime was tried, undefined before. */
  get reachable(): boolean | undefined {
    return this.#state?.ok;
  }

  get #endpoint(): string {
    const e = this.#o.endpoint;
    return typeof e === 'string' ? e : e();
  }

  get #clock(): Clock {
    return this.#o.clock ?? unrefClock;
  }

  /** The runtime answered. */
  up(): void {
    if (this.#state?.ok) return;
    const wasStale = this.#state?.stale === true;
    if (this.#state) this.#o.log.info({ endpoint: this.#endpoint }, 'container runtime reachable');
    this.#clearGrace();
    this.#state = { ok: true, since: this.#o.now() };
    this.#writeAll();
    if (wasStale) this.#o.onRecovered?.();
  }

  /** The runtime did not answer (a failed connect or call). */
  down(err: unknown): void {
    const message = unreachableMessage(this.#endpoint, err);
    const prev = this.#state;
    if (prev && !prev.ok && prev.message === message) return;
    if (!prev || prev.ok) {
      // Once per outage, at warn level and without a stack: what is awaited and how to fix it.
      const watching = this.#o.watching ?? [this.#endpoint];
      this.#o.log.warn(
        { endpoint: this.#endpoint, reason: message, watching },
        `waiting for a container runtime: ${message.replace(/; container states.*$/, '')}. ` +
          `Outpost connects as soon as one answers at ${watching.join(', ')}. To fix: start containerd ` +
          '(systemctl start containerd), run `npm run lab` in the Outpost checkout, or set ' +
          '--runtime-endpoint (OUTPOST_RUNTIME_ENDPOINT) to a CRI socket',
      );
    }
    const since = prev && !prev.ok ? prev.since : this.#o.now();
    const stale = prev !== undefined && !prev.ok && prev.stale === true;
    this.#state = { ok: false, since, message, stale };
    if (!stale && !this.#graceTimer) {
      const left = Math.max(0, since + (this.#o.unreachableGraceMs ?? UNREACHABLE_GRACE_MS) - this.#o.now());
      this.#graceTimer = this.#clock.setTimeout(() => this.#markStale(), left);
    }
    this.#writeAll();
  }

  /** Stops the grace timer (shutdown). */
  close(): void {
    this.#clearGrace();
  }

  #clearGrace(): void {
    if (this.#graceTimer) this.#clock.clearTimeout(this.#graceTimer);
    this.#graceTimer = undefined;
  }

  #markStale(): void {
    this.#graceTimer = undefined;
    const s = this.#state;
    if (!s || s.ok || s.stale) return;
    s.stale = true;
    this.#o.log.warn(
      { endpoint: this.#endpoint, unreachableMs: this.#o.now() - s.since },
      'container runtime still unreachable: pods shown not ready (RuntimeUnreachable)',
    );
    this.#writeAll();
  }

  /** `status` with this condition set (from the current state, else as `stored` had it). */
  decorate(status: PodStatus, stored: PodStatus | undefined): PodStatus {
    const before = stored?.conditions?.find((c) => c.type === RUNTIME_REACHABLE);
    const cond = this.#state ? this.#condition(before) : before;
    if (!cond) return status;
    // In place when the status has it already, so rewriting an unchanged status (a restart while
    // the runtime is still down) is byte-identical and writes nothing; appended otherwise.
    const conditions = status.conditions ?? [];
    const at = conditions.findIndex((c) => c.type === RUNTIME_REACHABLE);
    const decorated = {
      ...status,
      conditions: at < 0 ? [...conditions, cond] : conditions.map((c, i) => (i === at ? cond : c)),
    };
    return this.#state?.stale ? this.#notReady(decorated) : decorated;
  }

  /** Ready and ContainersReady False, no container ready: as a cluster shows an unreachable node's pods. */
  #notReady(status: PodStatus): PodStatus {
    const s = this.#state!;
    const message = `the container runtime has been unreachable since ${iso(s.since)}: ${s.message ?? ''}`;
    const conditions = (status.conditions ?? []).map(
      (c): PodCondition =>
        (c.type === 'Ready' || c.type === 'ContainersReady') &&
        (c.status !== 'False' || c.reason !== RUNTIME_UNREACHABLE)
          ? {
              ...c,
              status: 'False',
              reason: RUNTIME_UNREACHABLE,
              message,
              lastTransitionTime: iso(this.#o.now()),
            }
          : c,
    );
    for (const type of ['Ready', 'ContainersReady'])
      if (!conditions.some((c) => c.type === type))
        conditions.push({
          type,
          status: 'False',
          reason: RUNTIME_UNREACHABLE,
          message,
          lastTransitionTime: iso(this.#o.now()),
        });
    const unready = <T extends { ready?: boolean }>(list: T[] | undefined) =>
      list?.map((c) => ({ ...c, ready: false }));
    const out: PodStatus = { ...status, conditions };
    if (status.containerStatuses) out.containerStatuses = unready(status.containerStatuses)!;
    if (status.initContainerStatuses) out.initContainerStatuses = unready(status.initContainerStatuses)!;
    return out;
  }

  #condition(before: PodCondition | undefined): PodCondition {
    const s = this.#state!;
    const status = s.ok ? 'True' : 'False';
    const lastTransitionTime =
      before?.status === status && before.lastTransitionTime ? before.lastTransitionTime : iso(s.since);
    const c: PodCondition = { type: RUNTIME_REACHABLE, status, lastTransitionTime };
    if (!s.ok) Object.assign(c, { reason: RUNTIME_UNAVAILABLE, message: s.message });
    return c;
  }

  /** Rewrites the status of every pod of this node, so the hook sets the condition on each. */
  #writeAll(): void {
    this.#write(this.#o.store.pods.records({ nodeName: this.#o.nodeName }));
  }

  /** Rewrites the status of these pods, in one transaction. */
  #write(records: PodRecord[]): void {
    const { store, log } = this.#o;
    const sqlite = store.metabase.sqlite;
    if (!sqlite.open) return;
    try {
      sqlite.transaction(() => {
        for (const rec of records) {
          const served = store.pods.get(rec.namespace, rec.name)?.status;
          // A pod nothing reported on yet is served as Pending: store that, with the condition.
          const status =
            served && Object.keys(served).length > 2
              ? served
              : { phase: 'Pending' as const, qosClass: qosClass(rec.desired) };
          store.pods.setStatus(rec.uid, status);
        }
      })();
    } catch (err) {
      log.warn({ err }, 'could not write the RuntimeReachable condition');
    }
  }
}
