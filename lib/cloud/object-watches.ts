import type { KubeObject } from '#lib/kube/types.ts';
import type { Logger } from '#lib/log.ts';
import { referencedObjects } from '#lib/pods/spec/references.ts';
import type { Store } from '#lib/store/index.ts';
import { httpListWatch } from './list-watch.ts';
import { type ListWatch, Reflector, type ReflectorStore } from './reflector.ts';

type Kind = 'ConfigMap' | 'Secret';

/** One object as a reflector store: the metabase holds it (source=cloud) while the cloud has it. */
class ObjectSink implements ReflectorStore {
  #rv: string | undefined;
  constructor(
    readonly store: Store,
    readonly kind: Kind,
    readonly namespace: string,
    readonly name: string,
  ) {}
  resourceVersion(): string | undefined {
    return this.#rv;
  }
  replace(items: KubeObject[], rv: string): void {
    this.#rv = rv;
    const obj = items.find((i) => i.metadata.name === this.name);
    if (obj) this.#put(obj);
    else this.#remove();
  }
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject, rv: string): void {
    this.#rv = rv;
    if (obj.metadata.name !== this.name) return;
    if (type === 'DELETED') this.#remove();
    else this.#put(obj);
  }
  bookmark(rv: string): void {
    this.#rv = rv;
  }
  #put(obj: KubeObject): void {
    const { resourceVersion: _rv, managedFields: _mf, ...metadata } = obj.metadata;
    this.store.objects.put({ ...obj, apiVersion: 'v1', kind: this.kind, metadata }, 'cloud');
  }
  #remove(): void {
    const rec = this.store.objects
      .records({ source: 'cloud' })
      .find((r) => r.kind === this.kind && r.namespace === this.namespace && r.name === this.name);
    if (rec) this.store.objects.remove(this.kind, this.namespace, this.name);
  }
}

export interface ObjectWatchesOptions {
  store: Store;
  log: Logger;
  /** The list/watch of one object (tests pass fakes); default: the cloud context's. */
  listWatch: (kind: Kind, namespace: string, name: string) => ListWatch;
  pause(attempt: number, signal: AbortSignal): Promise<void>;
}

/**
 * Watches, one by one, the ConfigMaps and Secrets the node's cloud pods reference: the Node
 * authorizer lets a node read exactly those, and list/watch them only by
 * `fieldSelector=metadata.name=<name>`. A watch starts when the first pod references the object
 * and stops (the stored copy removed) when the last one goes.
 */
export class ObjectWatches {
  readonly #o: ObjectWatchesOptions;
  readonly #running = new Map<string, { ac: AbortController; reflector: Reflector }>();

  constructor(o: ObjectWatchesOptions) {
    this.#o = o;
  }

  /** Starts and stops watches to match what the cloud pods reference now. */
  sync(): void {
    const wanted = new Set<string>();
    for (const rec of this.#o.store.pods.records({ source: 'cloud' })) {
      for (const k of referencedObjects(rec.desired)) wanted.add(k);
    }
    for (const [key, w] of this.#running) {
      if (wanted.has(key)) continue;
      w.ac.abort();
      this.#running.delete(key);
      const [kind, ns, name] = key.split('/') as [Kind, string, string];
      const stored = this.#o.store.objects.records({ source: 'cloud' });
      if (stored.some((r) => r.kind === kind && r.namespace === ns && r.name === name)) {
        this.#o.store.objects.remove(kind, ns, name);
      }
    }
    for (const key of wanted) {
      if (this.#running.has(key)) continue;
      const [kind, ns, name] = key.split('/') as [Kind, string, string];
      const ac = new AbortController();
      const reflector = new Reflector({
        listWatch: this.#o.listWatch(kind, ns, name),
        store: new ObjectSink(this.#o.store, kind, ns, name),
        pause: this.#o.pause,
        onError: (err) => this.#o.log.debug({ err, object: key }, 'object watch failed; retrying'),
      });
      this.#running.set(key, { ac, reflector });
      void reflector.run(ac.signal);
    }
  }

  /** Watches running now, for tests and the fleet budget. */
  get count(): number {
    return this.#running.size;
  }

  /** LISTs made by all object watches so far. */
  get lists(): number {
    let n = 0;
    for (const w of this.#running.values()) n += w.reflector.lists;
    return n;
  }

  stop(): void {
    for (const w of this.#running.values()) w.ac.abort();
    this.#running.clear();
  }
}

/** The list/watch of one ConfigMap or Secret through the cloud context. */
export const objectListWatch =
  (ctx: Parameters<typeof httpListWatch>[0]) =>
  (kind: Kind, namespace: string, name: string): ListWatch =>
    httpListWatch(
      ctx,
      `/api/v1/namespaces/${namespace}/${kind === 'ConfigMap' ? 'configmaps' : 'secrets'}`,
      `metadata.name=${name}`,
    );
