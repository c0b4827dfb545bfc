import { randomUUID } from 'node:crypto';
import type { Metabase } from '#db/open.ts';
import type { Sqlite, Statement } from '#db/sqlite.ts';
import type { KubeObject } from '#lib/kube/types.ts';
import type { OutboxStore } from './outbox.ts';
import type { ResourceVersions } from './resource-version.ts';
import type { WatchHub } from './watch-hub.ts';

export interface InvolvedObject {
  kind: string;
  namespace: string;
  name: string;
  uid?: string | undefined;
  apiVersion?: string | undefined;
  fieldPath?: string | undefined;
}

export interface Event extends KubeObject {
  involvedObject: InvolvedObject;
  reason: string;
  message: string;
  type: 'Normal' | 'Warning';
  source: { component: string; host?: string };
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
}

interface EventRow {
  uid: string;
  object: string;
  resource_version: number;
}

export interface EventQuery {
  namespace?: string | undefined;
  involvedName?: string | undefined;
  involvedNamespace?: string | undefined;
}

/** Core v1 Events recorded at the edge, aggregated like kubelet's event correlator. */
export class EventStore {
  readonly #sqlite: Sqlite;
  readonly #rv: ResourceVersions;
  readonly #hub: WatchHub;
  readonly #now: () => number;
  readonly #host: string;
  readonly #max: number;
  readonly #outbox: OutboxStore | undefined;
  readonly #same: Statement<[string, string, string, string, string], EventRow>;
  #writes = 0;
  /** The nanosecond stamp of the last event name, so two events in one millisecond get two names. */
  #lastStamp = 0n;

  constructor(
    mb: Metabase,
    rv: ResourceVersions,
    hub: WatchHub,
    opts: { host: string; now?: () => number; max?: number; outbox?: OutboxStore | undefined },
  ) {
    this.#sqlite = mb.sqlite;
    this.#rv = rv;
    this.#hub = hub;
    this.#host = opts.host;
    this.#now = opts.now ?? Date.now;
    this.#max = opts.max ?? 10_000;
    this.#outbox = opts.outbox;
    this.#same = mb.sqlite.prepare(
      `SELECT uid, object, resource_version FROM events WHERE involved_namespace = ? AND involved_name = ?
       AND reason = ? AND type = ? AND json_extract(object, '$.message') = ? ORDER BY last_timestamp DESC LIMIT 1`,
    );
  }

  /** Records an event, or bumps the count of the same one already recorded for the object. */
  record(
    involved: InvolvedObject,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
    component = 'outpost',
  ): Event {
    return this.#sqlite.transaction(() => {
      const now = new Date(this.#now()).toISOString().replace(/\.\d+Z$/, 'Z');
      const rv = this.#rv.next();
      const prev = this.#same.get(involved.namespace, involved.name, reason, type, message);
      let event: Event;
      if (prev) {
        event = JSON.parse(prev.object) as Event;
        event.count += 1;
        event.lastTimestamp = now;
        event.involvedObject = clean(involved);
      } else {
        event = {
          kind: 'Event',
          apiVersion: 'v1',
          metadata: {
            name: `${involved.name}.${this.#stamp().toString(16)}`,
            namespace: involved.namespace,
            uid: randomUUID(),
            creationTimestamp: now,
          },
          involvedObject: clean(involved),
          reason,
          message,
          type,
          source: { component, host: this.#host },
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
          eventTime: null,
          reportingComponent: component,
          reportingInstance: this.#host,
        };
      }
      event.metadata.resourceVersion = String(rv);
      this.#sqlite
        .prepare(
          `INSERT INTO events (uid, namespace, name, involved_kind, involved_namespace, involved_name,
             involved_uid, reason, type, object, last_timestamp, resource_version)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT(uid) DO UPDATE SET object = excluded.object, last_timestamp = excluded.last_timestamp,
             involved_uid = excluded.involved_uid, resource_version = excluded.resource_version`,
        )
        .run(
          event.metadata.uid!,
          involved.namespace,
          event.metadata.name!,
          involved.kind,
          involved.namespace,
          involved.name,
          involved.uid ?? null,
          reason,
          type,
          JSON.stringify(event),
          now,
          rv,
        );
      this.#outbox?.push('event', event.metadata.uid!, event, prev ? 'update' : 'create');
      if (++this.#writes % 500 === 0) this.#prune();
      this.#hub.publish('events', { type: prev ? 'MODIFIED' : 'ADDED', rv, object: event });
      return event;
    })();
  }

  // kubelet names events `<object>.<UnixNano in hex>`; the clock gives milliseconds, so the stamp
  // is kept strictly increasing to keep names unique (list continue tokens point at names).
  #stamp(): bigint {
    const stamp = BigInt(Math.trunc(this.#now())) * 1_000_000n;
    this.#lastStamp = stamp > this.#lastStamp ? stamp : this.#lastStamp + 1n;
    return this.#lastStamp;
  }

  /** One event by namespace and name, or undefined. */
  get(namespace: string, name: string): Event | undefined {
    const row = this.#sqlite
      .prepare<[string, string], { object: string }>(
        'SELECT object FROM events WHERE namespace = ? AND name = ?',
      )
      .get(namespace, name);
    return row ? (JSON.parse(row.object) as Event) : undefined;
  }

  /** Events oldest first, narrowed in SQL by namespace and involved object where given. */
  list(q: EventQuery = {}): { items: Event[]; resourceVersion: number } {
    const where: string[] = [];
    const params: string[] = [];
    if (q.namespace !== undefined) {
      where.push('namespace = ?');
      params.push(q.namespace);
    }
    if (q.involvedNamespace !== undefined) {
      where.push('involved_namespace = ?');
      params.push(q.involvedNamespace);
    }
    if (q.involvedName !== undefined) {
      where.push('involved_name = ?');
      params.push(q.involvedName);
    }
    const sql = `SELECT uid, object, resource_version FROM events${where.length ? ` WHERE ${where.join(' AND ')}` : ''}
      ORDER BY last_timestamp, resource_version`;
    const rows = this.#sqlite.prepare<string[], EventRow>(sql).all(...params);
    return { items: rows.map((r) => JSON.parse(r.object) as Event), resourceVersion: this.#rv.current };
  }

  /** Keeps the newest `max` events. */
  #prune(): void {
    this.#sqlite
      .prepare(
        `DELETE FROM events WHERE uid IN (SELECT uid FROM events ORDER BY last_timestamp DESC, resource_version DESC
         LIMIT -1 OFFSET ?)`,
      )
      .run(this.#max);
  }
}

function clean(o: InvolvedObject): InvolvedObject {
  const out: InvolvedObject = { kind: o.kind, namespace: o.namespace, name: o.name };
  if (o.uid) out.uid = o.uid;
  out.apiVersion = o.apiVersion ?? 'v1';
  if (o.fieldPath) out.fieldPath = o.fieldPath;
  return out;
}
