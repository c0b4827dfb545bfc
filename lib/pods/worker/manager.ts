import { randomUUID } from 'node:crypto';
import type { Clock, Timer } from '#lib/clock.ts';
import type { CriClient } from '#lib/cri/client.ts';
import type { KubeObject, Pod } from '#lib/kube/types.ts';
import type { Logger } from '#lib/log.ts';
import type { Store } from '#lib/store/index.ts';
import type { PodRecord } from '#lib/store/pods.ts';
import { nodeIP } from '../runtime/node-ip.ts';
import { fingerprint, groupByPod, type RuntimePod } from '../runtime/view.ts';
import { podSpecHash } from '../spec/container-config.ts';
import { referencedObjects, TOKEN_KIND } from '../spec/references.ts';
import { collectGarbage } from './gc.ts';
import { ImagePuller, type ImagePullMode } from './images.ts';
import { PodWorker, type Prober } from './pod-worker.ts';
import type { RestartRequests } from './restart-requests.ts';
import { isCritical } from './sandbox.ts';
import { Semaphore } from './semaphore.ts';
import { WriteBatch } from './write-batch.ts';

export interface PodManagerOptions {
  cri: CriClient;
  store: Store;
  log: Logger;
  clock: Clock;
  nodeName: string;
  dataDir: string;
  prober: Prober;
  /** --node-ip: what host-network pods report as their IP (default: the node's detected IPv4). */
  hostIP?: string | undefined;
  /** Pods worked on at once (default 32). */
  parallelism?: number;
  /** How often the runtime is relisted to notice exits (default 1 s). */
  relistMs?: number;
  /** Called with errors of the manager's own background work (relist, sync). */
  onError?: (err: unknown) => void;
  /** Containers stopped by a restart request (the API marks them, the worker restarts them at once). */
  restarts?: RestartRequests | undefined;
  /** How long pods wait at start-up for the system-critical ones' first sync (default 10 s). */
  criticalFirstMs?: number;
  /** A pull that cannot reach the registry: start from the local image (default) or fail (strict). */
  imagePull?: ImagePullMode;
  /**
   * Aborts when the agent stops (the pods module's signal): the passes' runtime calls in flight
   * (image pulls, stops waiting out a grace period) are cancelled, so stop() returns promptly.
   */
  signal?: AbortSignal | undefined;
}

interface Slot {
  running: Promise<void> | undefined;
  again: boolean;
  /** A relist's view of the pod for the next pass, if nothing was done to the pod since. */
  view: RuntimePod | undefined;
  /** Sequence number (see #seq) of the end of the pod's last pass. */
  endedAt: number;
}

/** What the manager last knew of a pod's runtime state, and as of which sequence number. */
interface Known {
  fingerprint: string;
  at: number;
}

/**
 * Runs the metabase's pods bound to this node on the container runtime, like kubelet: work is
 * serialized per pod and parallel across pods (bounded), and a relist loop notices exits.
 */
export class PodManager {
  readonly #o: PodManagerOptions;
  readonly #worker: PodWorker;
  /** This metabase's identity, stamped on what the manager creates and required by GC. */
  readonly #managedBy: string;
  readonly #sem: Semaphore;
  readonly #slots = new Map<string, Slot>();
  readonly #wakes = new Map<string, { at: number; timer: Timer }>();
  readonly #writes: WriteBatch;
  /** Orders relists against the ends of passes: a view listed before a pass ended is stale. */
  #seq = 0;
  #known = new Map<string, Known>();
  #desired = new Map<string, string>();
  #relistTimer: Timer | undefined;
  #unsubscribe: (() => void)[] = [];
  #stopped = false;
  #relists = 0;
  #runtimeUp: boolean | undefined;

  constructor(o: PodManagerOptions) {
    this.#o = o;
    this.#sem = new Semaphore(o.parallelism ?? 32);
    this.#managedBy = metabaseId(o.store);
    this.#writes = new WriteBatch(o.store.metabase.sqlite, (err) => {
      o.log.warn({ err }, 'status or event write failed');
      o.onError?.(err);
    });
    this.#worker = new PodWorker({
      cri: o.cri,
      store: o.store,
      log: o.log,
      clock: o.clock,
      images: new ImagePuller(o.cri, () => o.clock.now(), undefined, o.imagePull),
      prober: o.prober,
      nodeName: o.nodeName,
      hostIP: o.hostIP ?? nodeIP(),
      dataDir: o.dataDir,
      managedBy: this.#managedBy,
      wakeAt: (uid, at) => this.#wakeAt(uid, at),
      restarts: o.restarts,
      writes: this.#writes,
      signal: o.signal,
    });
  }

  get worker(): PodWorker {
    return this.#worker;
  }

  /**
   * Adopts what the runtime already runs and recreates what is missing, all pods in parallel
   * (the system-critical ones first: the others wait for their first sync, up to criticalFirstMs),
   * then follows the metabase and the runtime. One relist serves every pod's first pass. Resolves
   * once every pod has had its first sync.
   */
  async start(): Promise<void> {
    const { store } = this.#o;
    // The desired specs are known before the first event arrives: status writes (other modules
    // rewrite every pod's status when the runtime answers) are no reason to sync a pod.
    const pods = this.#o.store.pods.records({ nodeName: this.#o.nodeName });
    for (const p of pods) this.#desired.set(p.uid, desiredKey(p.desired));
    // A changed ConfigMap, Secret or service-account token refreshes the volumes of the pods
    // using it (each pass rewrites API-data volumes atomically when their payload changed).
    for (const kind of ['ConfigMap', 'Secret', TOKEN_KIND]) {
      this.#unsubscribe.push(
        store.hub.subscribe(kind, store.rv.current, (ev) => {
          const o = ev.object as KubeObject;
          for (const uid of this.#users(kind, o.metadata.namespace ?? 'default', o.metadata.name ?? '')) {
            void this.enqueue(uid);
          }
        }),
      );
    }
    const unsubscribe = store.hub.subscribe('pods', store.rv.current, (ev) => {
      const pod = ev.object as Pod;
      if (pod.spec?.nodeName !== this.#o.nodeName || !pod.metadata.uid) return;
      const key = desiredKey(pod);
      if (ev.type !== 'DELETED' && this.#desired.get(pod.metadata.uid) !== key) {
        this.#desired.set(pod.metadata.uid, key);
        this.enqueue(pod.metadata.uid);
      }
    });
    this.#unsubscribe.push(unsubscribe);
    const { runtime, listedAt } = await this.#list();
    const sync = (p: PodRecord) => this.enqueue(p.uid, runtime.get(p.uid) ?? absent(p.uid), listedAt);
    const critical = Promise.all(pods.filter((p) => isCritical(p.desired)).map(sync));
    await this.#within(critical, this.#o.criticalFirstMs ?? 10_000);
    await Promise.all(pods.filter((p) => !isCritical(p.desired)).map(sync));
    await critical;
    this.#scheduleRelist();
  }

  /** Waits for `p`, or for `ms` at most (a critical pod stuck pulling its image holds no one up). */
  async #within(p: Promise<unknown>, ms: number): Promise<void> {
    let timer: Timer | undefined;
    await Promise.race([p, new Promise<void>((r) => (timer = this.#o.clock.setTimeout(r, ms)))]);
    if (timer) this.#o.clock.clearTimeout(timer);
  }

  /**
   * Asks for a sync of the pod; a request during a running sync runs once more after it. `view`
   * is the pod as a relist numbered `listedAt` saw it: the pass uses it instead of listing the pod
   * again, unless the pod's last pass ended after that relist.
   */
  enqueue(uid: string, view?: RuntimePod, listedAt = 0): Promise<void> {
    let slot = this.#slots.get(uid);
    if (!slot) {
      slot = { running: undefined, again: false, view: undefined, endedAt: 0 };
      this.#slots.set(uid, slot);
    }
    if (slot.running) {
      slot.again = true;
      return slot.running;
    }
    const s = slot;
    s.view = view && listedAt > s.endedAt ? view : undefined;
    s.running = (async () => {
      do {
        s.again = false;
        if (this.#stopped) break;
        const view = s.view;
        s.view = undefined;
        // Queued behind the parallelism limit when stop() came: not started (stop waits for it).
        await this.#sem.run(() => (this.#stopped ? Promise.resolve() : this.#syncOne(uid, view)));
        s.endedAt = ++this.#seq;
      } while (s.again);
      s.running = undefined;
    })();
    return s.running;
  }

  async #syncOne(uid: string, view: RuntimePod | undefined): Promise<void> {
    const rec = this.#o.store.pods.recordByUid(uid);
    if (!rec || rec.desired.spec.nodeName !== this.#o.nodeName) return;
    try {
      const rt = await this.#worker.sync(rec, view);
      // What the pass left is what the next relist compares with: a runtime that loses the pod
      // right after (wiped, restarted empty) is noticed even if no relist ever saw the pod.
      if (rt) this.#known.set(uid, { fingerprint: fingerprint(rt), at: ++this.#seq });
      else this.#known.delete(uid);
    } catch (err) {
      if (this.#o.signal?.aborted) {
        // Cancelled by the agent stopping, not a failure: what the pass did not finish (a pod
        // being deleted stays marked deleting) the next start does again.
        this.#o.log.info(
          { pod: `${rec.namespace}/${rec.name}` },
          'pod sync cancelled: the agent is stopping',
        );
        return;
      }
      this.#o.log.warn({ err, pod: `${rec.namespace}/${rec.name}` }, 'pod sync failed');
      this.#o.onError?.(err);
      this.#wakeAt(uid, this.#o.clock.now() + 2000);
    }
  }

  /** The pods of this node that use an object (a token names its pod). */
  #users(kind: string, namespace: string, name: string): string[] {
    if (kind === TOKEN_KIND) {
      const uid = name.split('.')[0] ?? '';
      return this.#desired.has(uid) ? [uid] : [];
    }
    const key = `${kind}/${namespace}/${name}`;
    return this.#o.store.pods
      .records({ nodeName: this.#o.nodeName })
      .filter((r) => !r.desired.metadata.deletionTimestamp && referencedObjects(r.desired).has(key))
      .map((r) => r.uid);
  }

  /** Recomputes a pod's status without acting (a probe result changed). */
  refresh(uid: string): void {
    const rec = this.#o.store.pods.recordByUid(uid);
    if (rec)
      this.#worker.refreshStatus(rec).catch((err) => this.#o.log.debug({ err }, 'status refresh failed'));
  }

  #wakeAt(uid: string, at: number): void {
    const prev = this.#wakes.get(uid);
    if (prev && prev.at <= at) return;
    if (prev) this.#o.clock.clearTimeout(prev.timer);
    const timer = this.#o.clock.setTimeout(
      () => {
        this.#wakes.delete(uid);
        this.enqueue(uid);
      },
      Math.max(0, at - this.#o.clock.now()),
    );
    this.#wakes.set(uid, { at, timer });
  }

  #scheduleRelist(): void {
    if (this.#stopped) return;
    this.#relistTimer = this.#o.clock.setTimeout(() => {
      this.#relist()
        .catch((err) => this.#o.onError?.(err))
        .finally(() => this.#scheduleRelist());
    }, this.#o.relistMs ?? 1000);
  }

  /** Lists the whole runtime once, grouped by pod; records what it saw. */
  async #list(): Promise<{ runtime: Map<string, RuntimePod>; listedAt: number; recovered: boolean }> {
    const { cri, log, signal } = this.#o;
    const listedAt = ++this.#seq;
    let runtime: Map<string, RuntimePod>;
    try {
      const [sandboxes, containers] = await Promise.all([
        cri.listPodSandbox(undefined, signal),
        cri.listContainers(undefined, signal),
      ]);
      runtime = groupByPod(sandboxes, containers);
    } catch (err) {
      // Cancelled by the agent stopping: the runtime did nothing wrong.
      if (signal?.aborted) throw err;
      if (this.#runtimeUp !== false)
        log.warn({ err, endpoint: cri.endpoint }, 'container runtime unreachable');
      this.#runtimeUp = false;
      throw err;
    }
    const recovered = this.#runtimeUp === false;
    this.#runtimeUp = true;
    if (recovered) log.info({ endpoint: cri.endpoint }, 'container runtime reachable again');
    return { runtime, listedAt, recovered };
  }

  /** Lists the runtime once and syncs every pod whose runtime state changed since last known. */
  async #relist(): Promise<void> {
    const { cri, log } = this.#o;
    const { runtime, listedAt, recovered } = await this.#list();
    const known = new Map<string, Known>();
    for (const uid of this.#o.store.pods.uids({ nodeName: this.#o.nodeName })) {
      const rt = runtime.get(uid) ?? absent(uid);
      const fp = fingerprint(rt);
      const last = this.#known.get(uid);
      // A pass that ended after this listing knows better than the listing.
      if (last && last.at > listedAt) {
        known.set(uid, last);
        continue;
      }
      known.set(uid, { fingerprint: fp, at: listedAt });
      if (recovered || fp !== (last?.fingerprint ?? '')) this.enqueue(uid, rt, listedAt);
    }
    this.#known = known;
    if (++this.#relists % 10 === 1) {
      await collectGarbage({
        cri,
        log,
        runtime,
        known: new Set(this.#o.store.pods.uids()),
        managedBy: this.#managedBy,
        onRemoved: (id) => this.#worker.forgetContainer(id),
        signal: this.#o.signal,
      });
    }
  }

  /** Whether the last relist reached the runtime. */
  get runtimeUp(): boolean {
    return this.#runtimeUp === true;
  }

  /**
   * Stops following; pods keep running in the runtime. Waits for the passes in flight; those still
   * queued (a start with more pods than the parallelism) never begin.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const off of this.#unsubscribe) off();
    if (this.#relistTimer) this.#o.clock.clearTimeout(this.#relistTimer);
    for (const w of this.#wakes.values()) this.#o.clock.clearTimeout(w.timer);
    this.#wakes.clear();
    await Promise.all([...this.#slots.values()].map((s) => s.running));
    this.#writes.flush();
  }
}

/** A pod the runtime holds nothing of. */
const absent = (uid: string): RuntimePod => ({ uid, sandboxes: [], containers: [] });

const desiredKey = (pod: Pod) => `${podSpecHash(pod)}/${pod.metadata.deletionTimestamp ?? ''}`;

/** The metabase's identity, created once; Outpost only garbage-collects what carries it. */
export function metabaseId(store: Store): string {
  const sqlite = store.metabase.sqlite;
  const row = sqlite.prepare("SELECT value FROM meta WHERE key = 'metabase_id'").get() as
    | { value: string }
    | undefined;
  if (row) return row.value;
  const id = randomUUID();
  sqlite.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('metabase_id', ?)").run(id);
  return (sqlite.prepare("SELECT value FROM meta WHERE key = 'metabase_id'").get() as { value: string })
    .value;
}
