import { randomUUID } from 'node:crypto';
import type { Clock, Timer } from '../clock.ts';
import type { CriClient } from '../cri/client.ts';
import type { Pod } from '../kube/types.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../store/index.ts';
import type { PodRecord } from '../store/pods.ts';
import { podSpecHash } from './container-config.ts';
import { collectGarbage } from './gc.ts';
import { ImagePuller } from './images.ts';
import { nodeIP } from './node-ip.ts';
import { PodWorker, type Prober } from './pod-worker.ts';
import { fingerprint, groupByPod, type RuntimePod } from './runtime-view.ts';
import { isCritical } from './sandbox.ts';
import { Semaphore } from './semaphore.ts';

export interface PodManagerOptions {
  cri: CriClient;
  store: Store;
  log: Logger;
  clock: Clock;
  nodeName: string;
  dataDir: string;
  prober: Prober;
  hostIP?: string;
  /** Pods worked on at once (default 32). */
  parallelism?: number;
  /** How often the runtime is relisted to notice exits (default 1 s). */
  relistMs?: number;
  /** Called with errors of the manager's own background work (relist, sync). */
  onError?: (err: unknown) => void;
}

interface Slot {
  running: Promise<void> | undefined;
  again: boolean;
}

/**
 * Runs the metabase's pods bound to this node on the container runtime, like kubelet: work is
 * serialized per pod and parallel across pods (bounded), and a relist loop notices exits.
 */
export class PodManager {
  readonly #o: PodManagerOptions;
  readonly #worker: PodWorker;
  readonly #sem: Semaphore;
  readonly #slots = new Map<string, Slot>();
  readonly #wakes = new Map<string, { at: number; timer: Timer }>();
  #fingerprints = new Map<string, string>();
  #desired = new Map<string, string>();
  #relistTimer: Timer | undefined;
  #unsubscribe: (() => void) | undefined;
  #stopped = false;
  #relists = 0;
  #runtimeUp: boolean | undefined;

  constructor(o: PodManagerOptions) {
    this.#o = o;
    this.#sem = new Semaphore(o.parallelism ?? 32);
    this.#worker = new PodWorker({
      cri: o.cri,
      store: o.store,
      log: o.log,
      clock: o.clock,
      images: new ImagePuller(o.cri, () => o.clock.now()),
      prober: o.prober,
      nodeName: o.nodeName,
      hostIP: o.hostIP ?? nodeIP(),
      dataDir: o.dataDir,
      managedBy: metabaseId(o.store),
      wakeAt: (uid, at) => this.#wakeAt(uid, at),
    });
  }

  get worker(): PodWorker {
    return this.#worker;
  }

  #mine(): PodRecord[] {
    return this.#o.store.pods.records({ nodeName: this.#o.nodeName });
  }

  /**
   * Adopts what the runtime already runs and recreates what is missing, all pods in parallel
   * (system-critical first), then follows the metabase and the runtime. Resolves once every pod
   * has had its first sync.
   */
  async start(): Promise<void> {
    const { store } = this.#o;
    this.#unsubscribe = store.hub.subscribe('pods', store.rv.current, (ev) => {
      const pod = ev.object as Pod;
      if (pod.spec?.nodeName !== this.#o.nodeName || !pod.metadata.uid) return;
      const key = desiredKey(pod);
      if (ev.type !== 'DELETED' && this.#desired.get(pod.metadata.uid) !== key) {
        this.#desired.set(pod.metadata.uid, key);
        this.enqueue(pod.metadata.uid);
      }
    });
    await this.#relist();
    const pods = this.#mine().sort((a, b) => Number(isCritical(b.desired)) - Number(isCritical(a.desired)));
    for (const p of pods) this.#desired.set(p.uid, desiredKey(p.desired));
    await Promise.all(pods.map((p) => this.enqueue(p.uid)));
    this.#scheduleRelist();
  }

  /** Asks for a sync of the pod; a request during a running sync runs once more after it. */
  enqueue(uid: string): Promise<void> {
    let slot = this.#slots.get(uid);
    if (!slot) {
      slot = { running: undefined, again: false };
      this.#slots.set(uid, slot);
    }
    if (slot.running) {
      slot.again = true;
      return slot.running;
    }
    const s = slot;
    s.running = (async () => {
      do {
        s.again = false;
        if (this.#stopped) break;
        await this.#sem.run(() => this.#syncOne(uid));
      } while (s.again);
      s.running = undefined;
    })();
    return s.running;
  }

  async #syncOne(uid: string): Promise<void> {
    const rec = this.#o.store.pods.recordByUid(uid);
    if (!rec || rec.desired.spec.nodeName !== this.#o.nodeName) return;
    try {
      await this.#worker.sync(rec);
    } catch (err) {
      this.#o.log.warn({ err, pod: `${rec.namespace}/${rec.name}` }, 'pod sync failed');
      this.#o.onError?.(err);
      this.#wakeAt(uid, this.#o.clock.now() + 2000);
    }
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

  /** Lists the runtime once and syncs every pod whose runtime state changed. */
  async #relist(): Promise<void> {
    const { cri, log } = this.#o;
    let runtime: Map<string, RuntimePod>;
    try {
      const [sandboxes, containers] = await Promise.all([cri.listPodSandbox(), cri.listContainers()]);
      runtime = groupByPod(sandboxes, containers);
    } catch (err) {
      if (this.#runtimeUp !== false)
        log.warn({ err, endpoint: cri.endpoint }, 'container runtime unreachable');
      this.#runtimeUp = false;
      throw err;
    }
    const recovered = this.#runtimeUp === false;
    this.#runtimeUp = true;
    if (recovered) log.info({ endpoint: cri.endpoint }, 'container runtime reachable again');
    const next = new Map<string, string>();
    for (const [uid, rt] of runtime) next.set(uid, fingerprint(rt));
    const mine = this.#mine();
    for (const rec of mine) {
      const fp = next.get(rec.uid) ?? '';
      if (recovered || fp !== (this.#fingerprints.get(rec.uid) ?? '')) this.enqueue(rec.uid);
    }
    this.#fingerprints = next;
    if (++this.#relists % 10 === 1) {
      await collectGarbage({
        cri,
        log,
        runtime,
        known: new Set(this.#o.store.pods.records().map((r) => r.uid)),
        managedBy: metabaseId(this.#o.store),
        onRemoved: (id) => this.#worker.forgetContainer(id),
      });
    }
  }

  /** Whether the last relist reached the runtime. */
  get runtimeUp(): boolean {
    return this.#runtimeUp === true;
  }

  /** Stops following; pods keep running in the runtime. Waits for syncs in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    if (this.#relistTimer) this.#o.clock.clearTimeout(this.#relistTimer);
    for (const w of this.#wakes.values()) this.#o.clock.clearTimeout(w.timer);
    this.#wakes.clear();
    await Promise.all([...this.#slots.values()].map((s) => s.running));
  }
}

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
