import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Metabase } from '#db/open.ts';
import type { Sqlite, Statement } from '#db/sqlite.ts';
import { applyStrategicMergePatch, podSchema } from '#lib/kube/strategic-merge.ts';
import type { Pod, PodStatus } from '#lib/kube/types.ts';
import type { OutboxStore } from './outbox.ts';
import type { ResourceVersions } from './resource-version.ts';
import type { WatchHub } from './watch-hub.ts';

export type Source = 'manifest' | 'cloud' | 'api';

/** The `origin` of a cloud pod the cloud no longer has: stopping it is not reported back. */
export const GONE = 'gone';

interface PodRow {
  uid: string;
  namespace: string;
  name: string;
  node_name: string;
  source: Source;
  origin: string | null;
  object: string;
  resource_version: number;
  patch: string | null;
}

interface KeyRow {
  uid: string;
  resource_version: number;
}

export interface PodRecord {
  uid: string;
  namespace: string;
  name: string;
  source: Source;
  origin: string | null;
  resourceVersion: number;
  /** The desired object, without status. */
  desired: Pod;
}

export interface ListOptions {
  namespace?: string | undefined;
  /** Continue after this (namespace, name), in key order. */
  after?: [string, string] | undefined;
  limit?: number | undefined;
}

const utf8 = new TextEncoder();

const SELECT = `SELECT p.uid, p.namespace, p.name, p.node_name, p.source, p.origin, p.object,
  p.resource_version, s.patch FROM pods p LEFT JOIN pod_status s ON s.uid = p.uid`;

/** Pods in the metabase: the desired object and its latest status patch, merged on read. */
export class PodStore {
  readonly #sqlite: Sqlite;
  readonly #rv: ResourceVersions;
  readonly #hub: WatchHub;
  readonly #now: () => number;
  readonly #outbox: OutboxStore | undefined;
  readonly #byName: Statement<[string, string], PodRow>;
  readonly #byUid: Statement<[string], PodRow>;
  readonly #statements = new Map<string, Statement<(string | number)[], unknown>>();
  /**
   * Served pods by uid, valid for one resourceVersion: the merge and the JSON encoding are done
   * once per change instead of once per read. The metabase stays the only source of truth.
   */
  readonly #served = new Map<string, { rv: number; pod: Pod; json: string; item?: Uint8Array }>();
  /**
   * Applied to every status setStatus stores, with the one stored before: how a condition owned
   * outside the lifecycle manager (`outpost.io/RuntimeReachable`) rides along with its writes.
   */
  statusHook: ((status: PodStatus, stored: PodStatus | undefined) => PodStatus) | undefined;
  /**
   * Called with the uid of each pod put adds, once that is committed: how the owner of such a
   * condition gives a status to a pod the lifecycle manager is not there to see (runtime down).
   */
  addedHook: ((uid: string) => void) | undefined;

  constructor(
    mb: Metabase,
    rv: ResourceVersions,
    hub: WatchHub,
    now: () => number = Date.now,
    outbox?: OutboxStore,
  ) {
    this.#sqlite = mb.sqlite;
    this.#rv = rv;
    this.#hub = hub;
    this.#now = now;
    this.#outbox = outbox;
    this.#byName = mb.sqlite.prepare(`${SELECT} WHERE p.namespace = ? AND p.name = ?`);
    this.#byUid = mb.sqlite.prepare(`${SELECT} WHERE p.uid = ?`);
  }

  /** The served pod (desired object + latest status), or undefined. */
  get(namespace: string, name: string): Pod | undefined {
    const row = this.#byName.get(namespace, name);
    return row && this.#serve(row).pod;
  }

  /** The served pod and its JSON encoding, from the cache when the resourceVersion matches. */
  getEncoded(namespace: string, name: string): { pod: Pod; json: string } | undefined {
    const row = this.#byName.get(namespace, name);
    return row && this.#serve(row);
  }

  /** The JSON encoding of a pod this store served (cached per resourceVersion). */
  encode(pod: Pod): string {
    const hit = this.#served.get(pod.metadata.uid ?? '');
    return hit && hit.pod === pod ? hit.json : JSON.stringify(pod);
  }

  /**
   * The JSON of a pod as an item of a PodList, in UTF-8: without kind and apiVersion, as
   * kube-apiserver lists (cached too). Bytes, so that a list is one copy of them and not three
   * (joined, flattened, encoded) on the V8 heap; each in its own buffer (Buffer.from would pin
   * pooled 8 KiB slabs for as long as any cached item in them lives).
   */
  encodeItem(pod: Pod): Uint8Array {
    const hit = this.#served.get(pod.metadata.uid ?? '');
    const item = () => utf8.encode(JSON.stringify({ ...pod, kind: undefined, apiVersion: undefined }));
    if (!hit || hit.pod !== pod) return item();
    hit.item ??= item();
    return hit.item;
  }

  #serve(row: PodRow): { pod: Pod; json: string } {
    const hit = this.#served.get(row.uid);
    if (hit && hit.rv === row.resource_version) return hit;
    const pod = served(row);
    const entry = { rv: row.resource_version, pod, json: JSON.stringify(pod) };
    this.#served.set(row.uid, entry);
    return entry;
  }

  /** The stored record without merging status, for the lifecycle manager and the manifest syncer. */
  record(namespace: string, name: string): PodRecord | undefined {
    const row = this.#byName.get(namespace, name);
    return row && toRecord(row);
  }

  /** The stored record by uid. */
  recordByUid(uid: string): PodRecord | undefined {
    const row = this.#byUid.get(uid);
    return row && toRecord(row);
  }

  /**
   * Served pods in (namespace, name) order, with the resourceVersion the list is consistent at.
   * The keys and resourceVersions are read first: the pods this store served at that version (every
   * pod it wrote, and every pod read since) come from the cache, without reading and parsing their
   * objects again; the others are read as they are now.
   */
  list(opts: ListOptions = {}): { items: Pod[]; resourceVersion: number } {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (opts.namespace !== undefined) {
      where.push('p.namespace = ?');
      params.push(opts.namespace);
    }
    if (opts.after) {
      where.push('(p.namespace, p.name) > (?, ?)');
      params.push(...opts.after);
    }
    let tail = `${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY p.namespace, p.name`;
    if (opts.limit !== undefined) {
      tail += ' LIMIT ?';
      params.push(opts.limit);
    }
    const keys = this.#statement<KeyRow>(`SELECT p.uid, p.resource_version FROM pods p${tail}`).all(
      ...params,
    );
    const items: Pod[] = [];
    const missing: number[] = [];
    for (const k of keys) {
      const hit = this.#served.get(k.uid);
      if (hit && hit.rv === k.resource_version) items.push(hit.pod);
      else missing.push(items.push(undefined as unknown as Pod) - 1);
    }
    if (missing.length > keys.length / 4) {
      // Mostly unread (the first list after a start): one query for all of them.
      const rows = this.#statement<PodRow>(`${SELECT}${tail}`).all(...params);
      return { items: rows.map((r) => this.#serve(r).pod), resourceVersion: this.#rv.current };
    }
    for (const i of missing) {
      const row = this.#byUid.get(keys[i]!.uid);
      if (row) items[i] = this.#serve(row).pod;
    }
    return {
      items: missing.length ? items.filter((p) => p !== undefined) : items,
      resourceVersion: this.#rv.current,
    };
  }

  /** A prepared statement per SQL text (the few shapes list() builds), prepared once. */
  #statement<R>(sql: string): Statement<(string | number)[], R> {
    let st = this.#statements.get(sql);
    if (!st) {
      st = this.#sqlite.prepare<(string | number)[], unknown>(sql);
      this.#statements.set(sql, st);
    }
    return st as Statement<(string | number)[], R>;
  }

  /** The uids of the stored pods (of one node), without reading their objects: the relist's hot path. */
  uids(filter: { nodeName?: string } = {}): string[] {
    const rows = filter.nodeName
      ? this.#sqlite
          .prepare<[string], { uid: string }>('SELECT uid FROM pods WHERE node_name = ?')
          .all(filter.nodeName)
      : this.#sqlite.prepare<[], { uid: string }>('SELECT uid FROM pods').all();
    return rows.map((r) => r.uid);
  }

  /** Every stored record, for reconciliation. */
  records(filter: { source?: Source; nodeName?: string } = {}): PodRecord[] {
    const where: string[] = [];
    const params: string[] = [];
    if (filter.source) {
      where.push('p.source = ?');
      params.push(filter.source);
    }
    if (filter.nodeName) {
      where.push('p.node_name = ?');
      params.push(filter.nodeName);
    }
    const sql = `${SELECT}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY p.namespace, p.name`;
    return this.#sqlite
      .prepare<string[], PodRow>(sql)
      .all(...params)
      .map(toRecord);
  }

  /**
   * Stores a desired pod. An existing pod of the same name keeps its uid and creationTimestamp;
   * an unchanged object is not written. Returns what happened.
   */
  put(pod: Pod, source: Source, origin: string | null = null): 'ADDED' | 'MODIFIED' | 'UNCHANGED' {
    let added: string | undefined;
    const result = this.#sqlite.transaction(() => {
      const namespace = pod.metadata.namespace ?? 'default';
      const name = pod.metadata.name!;
      const existing = this.#byName.get(namespace, name);
      const desired: Pod = structuredClone(pod);
      delete desired.status;
      delete desired.metadata.resourceVersion;
      desired.metadata.namespace = namespace;
      if (existing) {
        const prev = JSON.parse(existing.object) as Pod;
        desired.metadata.uid = prev.metadata.uid!;
        desired.metadata.creationTimestamp = prev.metadata.creationTimestamp ?? null;
        if (isDeepStrictEqual(prev, desired) && existing.source === source && existing.origin === origin) {
          return 'UNCHANGED';
        }
      } else {
        desired.metadata.uid ??= randomUUID();
        desired.metadata.creationTimestamp ??= new Date(this.#now()).toISOString().replace(/\.\d+Z$/, 'Z');
      }
      const rv = this.#rv.next();
      const uid = desired.metadata.uid!;
      this.#sqlite
        .prepare(
          `INSERT INTO pods (uid, namespace, name, node_name, source, origin, object, resource_version)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT(uid) DO UPDATE SET node_name = excluded.node_name, source = excluded.source,
             origin = excluded.origin, object = excluded.object, resource_version = excluded.resource_version`,
        )
        .run(uid, namespace, name, desired.spec.nodeName ?? '', source, origin, JSON.stringify(desired), rv);
      const type = existing ? 'MODIFIED' : 'ADDED';
      this.#publish(type, uid, rv);
      if (!existing) added = uid;
      return type;
    })();
    if (added) this.addedHook?.(added);
    return result;
  }

  /**
   * Marks a pod as terminating (deletionTimestamp), leaving its removal to whoever stops it.
   * `gone`: the cloud removed the pod already (deleted while the node was offline, or evicted), so
   * its removal here is not reported back.
   */
  markDeleting(
    namespace: string,
    name: string,
    gracePeriodSeconds?: number,
    opts: { gone?: boolean } = {},
  ): boolean {
    return this.#sqlite.transaction(() => {
      const row = this.#byName.get(namespace, name);
      if (!row) return false;
      if (opts.gone && row.origin !== GONE) {
        this.#sqlite.prepare('UPDATE pods SET origin = ? WHERE uid = ?').run(GONE, row.uid);
      }
      const pod = JSON.parse(row.object) as Pod;
      if (pod.metadata.deletionTimestamp) return true;
      const grace = gracePeriodSeconds ?? Number(pod.spec.terminationGracePeriodSeconds ?? 30);
      pod.metadata.deletionTimestamp = new Date(this.#now() + grace * 1000)
        .toISOString()
        .replace(/\.\d+Z$/, 'Z');
      pod.metadata.deletionGracePeriodSeconds = grace;
      const rv = this.#rv.next();
      this.#sqlite
        .prepare('UPDATE pods SET object = ?, resource_version = ?, deleted_at = ? WHERE uid = ?')
        .run(JSON.stringify(pod), rv, new Date(this.#now()).toISOString(), row.uid);
      this.#publish('MODIFIED', row.uid, rv);
      return true;
    })();
  }

  /**
   * Removes a pod and its status for good. The cloud hears of it through the outbox (after the
   * pod's last status), unless `report` is false or the pod was marked gone: the cloud removed
   * the pod itself.
   */
  remove(namespace: string, name: string, opts: { report?: boolean } = {}): boolean {
    return this.#sqlite.transaction(() => {
      const row = this.#byName.get(namespace, name);
      if (!row) return false;
      if (opts.report === false || (row.source === 'cloud' && row.origin === GONE)) {
        this.#outbox?.discard('status', row.uid);
      } else {
        const { uid, namespace, name, source } = row;
        this.#outbox?.push('delete', uid, { uid, namespace, name, source } satisfies OutboxPodRef);
      }
      const rv = this.#rv.next();
      this.#sqlite.prepare('DELETE FROM pods WHERE uid = ?').run(row.uid);
      this.#sqlite.prepare('DELETE FROM pod_status WHERE uid = ?').run(row.uid);
      this.#served.delete(row.uid);
      const last = served(row);
      last.metadata.resourceVersion = String(rv);
      this.#hub.publish('pods', { type: 'DELETED', rv, object: last });
      return true;
    })();
  }

  /**
   * Stores the pod's latest status patch (a strategic merge patch of `status`), with the next
   * per-node sequence number. Returns that sequence number, or undefined for an unknown pod.
   */
  setStatus(uid: string, status: PodStatus): number | undefined {
    return this.#sqlite.transaction(() => {
      const row = this.#byUid.get(uid);
      if (!row) return undefined;
      if (this.statusHook) status = this.statusHook(status, row.patch ? JSON.parse(row.patch) : undefined);
      const patch = JSON.stringify(status);
      if (row.patch === patch) return undefined;
      const seq = this.#rv.nextOf('status_seq');
      const rv = this.#rv.next();
      this.#sqlite
        .prepare(
          `INSERT INTO pod_status (uid, namespace, name, seq, patch, updated_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT(uid) DO UPDATE SET seq = excluded.seq, patch = excluded.patch, updated_at = excluded.updated_at`,
        )
        .run(uid, row.namespace, row.name, seq, patch, new Date(this.#now()).toISOString());
      this.#sqlite.prepare('UPDATE pods SET resource_version = ? WHERE uid = ?').run(rv, uid);
      const { namespace, name, source } = row;
      this.#outbox?.push('status', uid, { uid, namespace, name, source, seq, status } satisfies OutboxStatus);
      this.#publish('MODIFIED', uid, rv);
      return seq;
    })();
  }

  /**
   * Queues the pod's latest status for the cloud again, unless one waits already: the cloud shows
   * another one (the node lifecycle controller marked the pod not ready during an outage), and
   * the node's status wins, as kubelet's status manager reconciles it. Returns whether it queued.
   */
  resendStatus(uid: string): boolean {
    return this.#sqlite.transaction(() => {
      const row = this.#byUid.get(uid);
      const s = this.#sqlite
        .prepare<[string], { seq: number; patch: string }>('SELECT seq, patch FROM pod_status WHERE uid = ?')
        .get(uid);
      if (!row || !s || !this.#outbox?.enabled || this.#outbox.has('status', uid)) return false;
      const { namespace, name, source } = row;
      const status = JSON.parse(s.patch) as PodStatus;
      this.#outbox.push('status', uid, {
        uid,
        namespace,
        name,
        source,
        seq: s.seq,
        status,
      } satisfies OutboxStatus);
      return true;
    })();
  }

  #publish(type: 'ADDED' | 'MODIFIED', uid: string, rv: number): void {
    const row = this.#byUid.get(uid)!;
    this.#hub.publish('pods', { type, rv, object: this.#serve(row).pod });
  }
}

/** What an outbox entry about a pod names: enough to address it in the cloud. */
export interface OutboxPodRef {
  uid: string;
  namespace: string;
  name: string;
  source: Source;
}

/** A `status` outbox entry: the pod's whole latest status patch and its sequence number. */
export interface OutboxStatus extends OutboxPodRef {
  seq: number;
  status: PodStatus;
}

/** Records the sequence number of the status the cloud acknowledged (pod_status.uploaded_seq). */
export function markUploaded(sqlite: Sqlite, uid: string, seq: number): void {
  sqlite
    .prepare(
      'UPDATE pod_status SET uploaded_seq = ? WHERE uid = ? AND (uploaded_seq IS NULL OR uploaded_seq < ?)',
    )
    .run(seq, uid, seq);
}

function toRecord(row: PodRow): PodRecord {
  return {
    uid: row.uid,
    namespace: row.namespace,
    name: row.name,
    source: row.source,
    origin: row.origin,
    resourceVersion: row.resource_version,
    desired: JSON.parse(row.object) as Pod,
  };
}

/** The pod as served: desired object, status patch merged the way the API server would. */
function served(row: PodRow): Pod {
  let pod = JSON.parse(row.object) as Pod;
  if (row.patch) pod = applyStrategicMergePatch(pod, { status: JSON.parse(row.patch) }, podSchema) as Pod;
  // Accepted but not yet reported on by the lifecycle manager: Pending, as the API server defaults it.
  else pod.status = { phase: 'Pending', qosClass: pod.status?.qosClass ?? 'BestEffort' };
  pod.metadata.resourceVersion = String(row.resource_version);
  return pod;
}
