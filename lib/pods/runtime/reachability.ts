// The `outpost.io/RuntimeReachable` pod condition: whether the container runtime behind the pods
// answers. While it does not, the pods served from the metabase are the last known picture and
// the condition says so (status False, reason RuntimeUnavailable, a message naming the endpoint).
//
// The lifecycle manager owns the pod status and rewrites it whole; this condition rides along
// through PodStore.statusHook, which adds it to every status written (the manager's included), so
// the two writers never undo each other. On a change of reachability every pod of the node is
// rewritten once, in one transaction.
import type { PodCondition, PodStatus } from '#lib/kube/types.ts';
import type { Logger } from '#lib/log.ts';
import type { Store } from '#lib/store/index.ts';
import { qosClass } from './status.ts';

export const RUNTIME_REACHABLE = 'outpost.io/RuntimeReachable';
export const RUNTIME_UNAVAILABLE = 'RuntimeUnavailable';

interface State {
  ok: boolean;
  since: number;
  message?: string | undefined;
}

export interface RuntimeReachabilityOptions {
  store: Store;
  nodeName: string;
  /** The CRI endpoint, named in the condition's message. */
  endpoint: string;
  now: () => number;
  log: Logger;
}

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

  constructor(o: RuntimeReachabilityOptions) {
    this.#o = o;
    o.store.pods.statusHook = (status, stored) => this.decorate(status, stored);
  }

  /** True or false once the runtime was tried, undefined before. */
  get reachable(): boolean | undefined {
    return this.#state?.ok;
  }

  /** The runtime answered. */
  up(): void {
    if (this.#state?.ok) return;
    if (this.#state) this.#o.log.info({ endpoint: this.#o.endpoint }, 'container runtime reachable');
    this.#state = { ok: true, since: this.#o.now() };
    this.#writeAll();
  }

  /** The runtime did not answer (a failed connect or call). */
  down(err: unknown): void {
    const message = unreachableMessage(this.#o.endpoint, err);
    const prev = this.#state;
    if (prev && !prev.ok && prev.message === message) return;
    if (!prev || prev.ok)
      this.#o.log.warn({ endpoint: this.#o.endpoint, reason: message }, 'container runtime unreachable');
    this.#state = { ok: false, since: prev && !prev.ok ? prev.since : this.#o.now(), message };
    this.#writeAll();
  }

  /** `status` with this condition set (from the current state, else as `stored` had it). */
  decorate(status: PodStatus, stored: PodStatus | undefined): PodStatus {
    const before = stored?.conditions?.find((c) => c.type === RUNTIME_REACHABLE);
    const cond = this.#state ? this.#condition(before) : before;
    if (!cond) return status;
    const others = (status.conditions ?? []).filter((c) => c.type !== RUNTIME_REACHABLE);
    return { ...status, conditions: [...others, cond] };
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
    const { store, nodeName, log } = this.#o;
    const sqlite = store.metabase.sqlite;
    if (!sqlite.open) return;
    try {
      sqlite.transaction(() => {
        for (const rec of store.pods.records({ nodeName })) {
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
