import { createHash } from 'node:crypto';
import type { Pod } from '#lib/kube/types.ts';
import type { Logger } from '#lib/log.ts';
import type { Event } from '#lib/store/events.ts';
import type { Store } from '#lib/store/index.ts';
import type { OutboxEntry } from '#lib/store/outbox.ts';
import { markUploaded, type OutboxPodRef, type OutboxStatus } from '#lib/store/pods.ts';
import {
  type ApiRequest,
  type ApiResponse,
  isRetryable,
  LinkError,
  MERGE_PATCH,
  STRATEGIC_MERGE,
  statusMessage,
} from './api.ts';

export interface OutboxSenderOptions {
  store: Store;
  request: ApiRequest;
  nodeName: string;
  log: Logger;
  /** Objects (pods, events, devices) sent to at once (default 16); one object's entries stay in order. */
  concurrency?: number;
  /** Entries read from the outbox per round (default 256). */
  batch?: number;
}

/** A `device-status` outbox entry. */
export interface OutboxDeviceStatus {
  namespace: string;
  name: string;
  status: unknown;
}

interface Mirror {
  name: string;
  uid: string;
}

const MIRROR = 'kubernetes.io/config.mirror';

/**
 * Drains the outbox to the API server in order: one object's entries one after another, different
 * objects in parallel. A pod's latest status goes as a strategic-merge patch on `pods/status`
 * (static pods: on their mirror pod, created on first use), an event is created or, when
 * repeated, patched with its count and last time, a pod's removal is a DELETE with a uid
 * precondition. An entry is acknowledged (removed) only after the cloud answered it; an answer
 * that will never change (the pod is gone, the request is forbidden) drops the entry with a log.
 */
export class OutboxSender {
  readonly #o: OutboxSenderOptions;
  /** Static pod uid → its mirror pod in the cloud. */
  readonly #mirrors = new Map<string, Mirror>();
  #nodeUid: string | undefined;
  /** Requests sent since start, for the benchmark and metrics. */
  requests = 0;

  constructor(o: OutboxSenderOptions) {
    this.#o = o;
  }

  /**
   * Sends until the outbox is empty; returns how many entries were acknowledged. Throws a
   * LinkError when the cloud stopped answering (what was answered before stays acknowledged).
   */
  async drain(): Promise<number> {
    const { store } = this.#o;
    let total = 0;
    for (;;) {
      const entries = store.outbox.peek(this.#o.batch ?? 256);
      if (entries.length === 0) return total;
      const groups = new Map<string, OutboxEntry[]>();
      for (const e of entries) {
        const k =
          e.kind === 'event' ? `e/${e.key}` : e.kind === 'device-status' ? `d/${e.key}` : `p/${e.key}`;
        const g = groups.get(k);
        if (g) g.push(e);
        else groups.set(k, [e]);
      }
      const done: OutboxEntry[] = [];
      let failure: unknown;
      const queue = [...groups.values()];
      const worker = async () => {
        for (let g = queue.shift(); g && failure === undefined; g = queue.shift()) {
          for (const e of g) {
            if (failure !== undefined) return;
            try {
              await this.#send(e);
              done.push(e);
            } catch (err) {
              failure ??= err;
            }
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.#o.concurrency ?? 16, queue.length) }, worker));
      store.outbox.ack(
        done.map((e) => e.id),
        () => {
          for (const e of done) {
            if (e.kind === 'status')
              markUploaded(store.metabase.sqlite, e.key, (e.payload as OutboxStatus).seq);
          }
        },
      );
      total += done.length;
      if (failure !== undefined) throw failure;
    }
  }

  async #call(
    method: Parameters<ApiRequest>[0],
    path: string,
    body?: unknown,
    type?: string,
  ): Promise<ApiResponse> {
    this.requests += 1;
    let r: ApiResponse;
    try {
      r = await this.#o.request(method, path, body, type);
    } catch (err) {
      throw new LinkError(`${method} ${path}: ${(err as Error).message}`);
    }
    if (isRetryable(r.status)) throw new LinkError(`${method} ${path}: ${statusMessage(r)}`, r.status);
    return r;
  }

  #drop(e: OutboxEntry, r: ApiResponse, what: string): void {
    this.#o.log.warn(
      { kind: e.kind, key: e.key, code: r.status, reason: statusMessage(r) },
      `${what} refused by the cloud; dropped`,
    );
  }

  async #send(e: OutboxEntry): Promise<void> {
    if (e.kind === 'status') return this.#status(e, e.payload as OutboxStatus);
    if (e.kind === 'event') return this.#event(e, e.payload as Event);
    if (e.kind === 'delete') return this.#delete(e, e.payload as OutboxPodRef);
    return this.#deviceStatus(e, e.payload as OutboxDeviceStatus);
  }

  async #status(e: OutboxEntry, s: OutboxStatus): Promise<void> {
    let target: Mirror | undefined = { name: s.name, uid: s.uid };
    if (s.source === 'manifest') target = await this.#mirror(s);
    else if (s.source !== 'cloud') return;
    if (!target) return;
    const path = `/api/v1/namespaces/${s.namespace}/pods/${target.name}/status`;
    const body = { metadata: { uid: target.uid }, status: s.status };
    let r = await this.#call('PATCH', path, body, STRATEGIC_MERGE);
    if ((r.status === 404 || r.status === 409) && s.source === 'manifest') {
      // The mirror pod was deleted (or recreated) in the cloud: kubelet recreates it.
      this.#mirrors.delete(s.uid);
      target = await this.#mirror(s);
      if (!target) return;
      r = await this.#call(
        'PATCH',
        path,
        { metadata: { uid: target.uid }, status: s.status },
        STRATEGIC_MERGE,
      );
    }
    if (r.status >= 300 && r.status !== 404 && r.status !== 409) this.#drop(e, r, 'pod status');
  }

  async #event(e: OutboxEntry, ev: Event): Promise<void> {
    const ns = ev.metadata.namespace ?? ev.involvedObject.namespace;
    const involved = { ...ev.involvedObject };
    // Events of a static pod name its mirror pod, as kubelet's do (static pod names carry the node).
    const rec =
      involved.kind === 'Pod' && involved.uid ? this.#o.store.pods.recordByUid(involved.uid) : undefined;
    if (rec?.source === 'manifest') involved.name = mirrorName(rec.name, this.#o.nodeName);
    const body = {
      ...ev,
      metadata: { name: ev.metadata.name, namespace: ns },
      involvedObject: involved,
    };
    const create = () => this.#call('POST', `/api/v1/namespaces/${ns}/events`, body);
    const update = () =>
      this.#call(
        'PATCH',
        `/api/v1/namespaces/${ns}/events/${ev.metadata.name}`,
        { count: ev.count, lastTimestamp: ev.lastTimestamp, message: ev.message },
        STRATEGIC_MERGE,
      );
    let r = e.op === 'update' ? await update() : await create();
    if (r.status === 409 && e.op !== 'update') r = await update();
    else if (r.status === 404 && e.op === 'update') r = await create();
    if (r.status >= 300) this.#drop(e, r, 'event');
  }

  async #delete(e: OutboxEntry, p: OutboxPodRef): Promise<void> {
    let name = p.name;
    let uid: string | undefined = p.uid;
    if (p.source === 'manifest') {
      name = mirrorName(p.name, this.#o.nodeName);
      uid = this.#mirrors.get(p.uid)?.uid;
      this.#mirrors.delete(p.uid);
    } else if (p.source !== 'cloud') return;
    const body = {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      gracePeriodSeconds: 0,
      ...(uid ? { preconditions: { uid } } : {}),
    };
    const r = await this.#call('DELETE', `/api/v1/namespaces/${p.namespace}/pods/${name}`, body);
    // 404: gone already; 409: a new pod of the same name (the precondition protected it).
    if (r.status >= 300 && r.status !== 404 && r.status !== 409) this.#drop(e, r, 'pod deletion');
  }

  async #deviceStatus(e: OutboxEntry, d: OutboxDeviceStatus): Promise<void> {
    const path = `/apis/devices.kubeedge.io/v1beta1/namespaces/${d.namespace}/devices/${d.name}`;
    const patch = { status: d.status };
    let r = await this.#call('PATCH', `${path}/status`, patch, MERGE_PATCH);
    // A CRD without the status subresource (upstream KubeEdge's) takes status on the object itself;
    // 404 there too: the device is gone.
    if (r.status === 404) r = await this.#call('PATCH', path, patch, MERGE_PATCH);
    if (r.status >= 300 && r.status !== 404) this.#drop(e, r, 'device status');
  }

  /** The static pod's mirror pod in the cloud, created when missing; undefined when the cloud refuses it. */
  async #mirror(p: OutboxPodRef): Promise<Mirror | undefined> {
    const cached = this.#mirrors.get(p.uid);
    if (cached) return cached;
    const name = mirrorName(p.name, this.#o.nodeName);
    const path = `/api/v1/namespaces/${p.namespace}/pods/${name}`;
    let r = await this.#call('GET', path);
    if (r.status === 404) {
      const rec = this.#o.store.pods.recordByUid(p.uid);
      if (!rec) return undefined;
      r = await this.#call(
        'POST',
        `/api/v1/namespaces/${p.namespace}/pods`,
        await this.#mirrorPod(rec.desired, name),
      );
      if (r.status === 409) r = await this.#call('GET', path);
    }
    const pod = r.body as Pod | undefined;
    if (r.status >= 300 || !pod?.metadata?.uid) {
      this.#o.log.warn(
        { pod: `${p.namespace}/${p.name}`, code: r.status, reason: statusMessage(r) },
        'mirror pod refused by the cloud; the static pod is not shown there',
      );
      return undefined;
    }
    if (!pod.metadata.annotations?.[MIRROR]) {
      this.#o.log.warn(
        { pod: `${p.namespace}/${name}` },
        'a cloud pod that is not a mirror pod holds the mirror name',
      );
      return undefined;
    }
    const m = { name, uid: pod.metadata.uid };
    this.#mirrors.set(p.uid, m);
    return m;
  }

  async #mirrorPod(desired: Pod, name: string): Promise<Pod> {
    const hash = createHash('sha256').update(JSON.stringify(desired)).digest('hex').slice(0, 32);
    if (!this.#nodeUid) {
      const r = await this.#call('GET', `/api/v1/nodes/${this.#o.nodeName}`);
      if (r.status === 200) this.#nodeUid = (r.body as Pod).metadata.uid ?? undefined;
    }
    const { uid: _uid, creationTimestamp: _c, resourceVersion: _rv, ...meta } = desired.metadata;
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        ...meta,
        name,
        annotations: {
          ...desired.metadata.annotations,
          [MIRROR]: hash,
          'kubernetes.io/config.hash': hash,
          'kubernetes.io/config.source': 'file',
        },
        ...(this.#nodeUid
          ? {
              ownerReferences: [
                {
                  apiVersion: 'v1',
                  kind: 'Node',
                  name: this.#o.nodeName,
                  uid: this.#nodeUid,
                  controller: true,
                },
              ],
            }
          : {}),
      },
      spec: { ...desired.spec, nodeName: this.#o.nodeName },
    } as Pod;
  }
}

/** A static pod's name in the cloud: `<pod>-<node>`, as kubelet names static pods. */
export const mirrorName = (pod: string, node: string): string => `${pod}-${node}`;
