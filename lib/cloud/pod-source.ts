import type { KubeObject, Pod, PodStatus } from '#lib/kube/types.ts';
import type { Logger } from '#lib/log.ts';
import type { Store } from '#lib/store/index.ts';
import type { ReflectorStore } from './reflector.ts';

const RV_KEY = 'cloud_pods_rv';

/**
 * The cloud as a pod source: what the reflector of `pods?fieldSelector=spec.nodeName=<node>`
 * sees goes into the metabase as `source=cloud` pods, which the lifecycle manager runs like any
 * other. The resourceVersion is stored with each change, so a restart resumes the watch instead
 * of listing. A pod the cloud deleted gracefully arrives with its deletionTimestamp (the manager
 * stops it within the grace period, and its removal is reported back through the outbox); a pod
 * that vanished (DELETED, or missing from a relist after an outage) is stopped as gone.
 */
export class CloudPodSource implements ReflectorStore {
  readonly #store: Store;
  readonly #node: string;
  readonly #log: Logger;
  readonly #onChange: (() => void) | undefined;

  constructor(o: { store: Store; nodeName: string; log: Logger; onChange?: () => void }) {
    this.#store = o.store;
    this.#node = o.nodeName;
    this.#log = o.log;
    this.#onChange = o.onChange;
  }

  resourceVersion(): string | undefined {
    const row = this.#store.metabase.sqlite.prepare('SELECT value FROM meta WHERE key = ?').get(RV_KEY) as
      | { value: string }
      | undefined;
    return row?.value || undefined;
  }

  #setRv(rv: string): void {
    this.#store.metabase.sqlite
      .prepare(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
      )
      .run(RV_KEY, rv);
  }

  /** Forgets the stored resourceVersion (the next start lists). */
  reset(): void {
    this.#store.metabase.sqlite.prepare('DELETE FROM meta WHERE key = ?').run(RV_KEY);
  }

  replace(items: KubeObject[], rv: string): void {
    this.#store.metabase.sqlite.transaction(() => {
      const seen = new Set<string>();
      for (const item of items as Pod[]) {
        if (item.metadata.uid) seen.add(item.metadata.uid);
        this.#upsert(item);
      }
      for (const rec of this.#store.pods.records({ source: 'cloud' })) {
        if (!seen.has(rec.uid)) this.#gone(rec.namespace, rec.name, rec.uid);
      }
      this.#setRv(rv);
    })();
    this.#onChange?.();
  }

  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject, rv: string): void {
    this.#store.metabase.sqlite.transaction(() => {
      const pod = object as Pod;
      if (type === 'DELETED')
        this.#gone(pod.metadata.namespace ?? 'default', pod.metadata.name ?? '', pod.metadata.uid);
      else this.#upsert(pod);
      this.#setRv(rv);
    })();
    this.#onChange?.();
  }

  bookmark(rv: string): void {
    this.#setRv(rv);
  }

  #upsert(pod: Pod): void {
    if (pod.spec?.nodeName !== this.#node || !pod.metadata.uid || !pod.metadata.name) return;
    const ns = pod.metadata.namespace ?? 'default';
    const rec = this.#store.pods.record(ns, pod.metadata.name);
    if (rec && rec.uid !== pod.metadata.uid) {
      if (rec.source !== 'cloud') {
        this.#log.warn(
          { pod: `${ns}/${pod.metadata.name}`, source: rec.source },
          'a cloud pod has the name of a local pod; the local pod is kept and the cloud pod not run',
        );
        return;
      }
      // The old pod of that name is gone in the cloud (deleted and recreated): its containers go
      // with the garbage collection of pods the metabase no longer holds.
      this.#store.pods.remove(ns, pod.metadata.name, { report: false });
    }
    // Stopping already: the cloud cannot take that back (kubelet neither).
    if (
      rec?.uid === pod.metadata.uid &&
      rec.desired.metadata.deletionTimestamp &&
      !pod.metadata.deletionTimestamp
    )
      return;
    this.#store.pods.put(desiredOf(pod), 'cloud');
    if (rec?.uid === pod.metadata.uid && !pod.metadata.deletionTimestamp) {
      const local = this.#store.pods.get(ns, pod.metadata.name)?.status;
      if (local?.conditions && pod.status && statusDrifted(local, pod.status)) {
        if (this.#store.pods.resendStatus(pod.metadata.uid))
          this.#log.info(
            { pod: `${ns}/${pod.metadata.name}` },
            'the cloud shows another pod status; sending ours again',
          );
      }
    }
  }

  #gone(ns: string, name: string, uid: string | undefined): void {
    const rec = this.#store.pods.record(ns, name);
    if (rec?.source !== 'cloud' || (uid && rec.uid !== uid)) return;
    this.#log.info({ pod: `${ns}/${name}` }, 'pod removed in the cloud; stopping it');
    this.#store.pods.markDeleting(ns, name, rec.desired.metadata.deletionGracePeriodSeconds, { gone: true });
  }
}

/**
 * Whether the cloud's copy of a pod's status says something else than the node's latest: another
 * phase, or a condition the node reports with another value (what the node lifecycle
 * controller's MarkPodsNotReady writes while the node is unreachable).
 */
export function statusDrifted(local: PodStatus, cloud: PodStatus): boolean {
  if (local.phase !== cloud.phase) return true;
  return (local.conditions ?? []).some(
    (c) => cloud.conditions?.find((x) => x.type === c.type)?.status !== c.status,
  );
}

/** The cloud's pod without what changes on every write (status, resourceVersion, managedFields). */
export function desiredOf(pod: Pod): Pod {
  const { status: _s, ...rest } = pod;
  const { resourceVersion: _rv, managedFields: _mf, ...metadata } = pod.metadata;
  return { ...rest, metadata } as Pod;
}
