import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Metabase } from '#db/open.ts';
import type { Sqlite, Statement } from '#db/sqlite.ts';
import type { KubeObject } from '#lib/kube/types.ts';
import type { Source } from './pods.ts';
import type { ResourceVersions } from './resource-version.ts';
import type { WatchHub } from './watch-hub.ts';

interface ObjectRow {
  kind: string;
  namespace: string;
  name: string;
  source: Source;
  origin: string | null;
  object: string;
  resource_version: number;
}

export interface ObjectRecord {
  kind: string;
  namespace: string;
  name: string;
  source: Source;
  origin: string | null;
  object: KubeObject;
}

/** Namespaced objects that pods consume (ConfigMap, Secret), stored whole. */
export class ObjectStore {
  readonly #sqlite: Sqlite;
  readonly #rv: ResourceVersions;
  readonly #hub: WatchHub;
  readonly #now: () => number;
  readonly #get: Statement<[string, string, string], ObjectRow>;

  constructor(mb: Metabase, rv: ResourceVersions, hub: WatchHub, now: () => number = Date.now) {
    this.#sqlite = mb.sqlite;
    this.#rv = rv;
    this.#hub = hub;
    this.#now = now;
    this.#get = mb.sqlite.prepare('SELECT * FROM objects WHERE kind = ? AND namespace = ? AND name = ?');
  }

  get(kind: string, namespace: string, name: string): KubeObject | undefined {
    const row = this.#get.get(kind, namespace, name);
    return row && served(row);
  }

  /** The stored record (object, source, origin) of one object. */
  record(kind: string, namespace: string, name: string): ObjectRecord | undefined {
    const row = this.#get.get(kind, namespace, name);
    return row && { ...row, object: served(row) };
  }

  /** Objects of a kind in (namespace, name) order, with the resourceVersion the list is consistent at. */
  list(
    kind: string,
    opts: { namespace?: string | undefined; after?: [string, string] | undefined } = {},
  ): { items: KubeObject[]; resourceVersion: number } {
    const where = ['kind = ?'];
    const params: string[] = [kind];
    if (opts.namespace !== undefined) {
      where.push('namespace = ?');
      params.push(opts.namespace);
    }
    if (opts.after) {
      where.push('(namespace, name) > (?, ?)');
      params.push(...opts.after);
    }
    const rows = this.#sqlite
      .prepare<string[], ObjectRow>(
        `SELECT * FROM objects WHERE ${where.join(' AND ')} ORDER BY namespace, name`,
      )
      .all(...params);
    return { items: rows.map(served), resourceVersion: this.#rv.current };
  }

  records(filter: { source?: Source } = {}): ObjectRecord[] {
    const rows = filter.source
      ? this.#sqlite.prepare<[string], ObjectRow>('SELECT * FROM objects WHERE source = ?').all(filter.source)
      : this.#sqlite.prepare<[], ObjectRow>('SELECT * FROM objects').all();
    return rows.map((r) => ({ ...r, object: served(r) }));
  }

  /** Stores an object, keeping the uid and creationTimestamp of an existing one of the same name. */
  put(obj: KubeObject, source: Source, origin: string | null = null): 'ADDED' | 'MODIFIED' | 'UNCHANGED' {
    return this.#sqlite.transaction(() => {
      const kind = obj.kind!;
      const namespace = obj.metadata.namespace ?? 'default';
      const name = obj.metadata.name!;
      const existing = this.#get.get(kind, namespace, name);
      const next = structuredClone(obj);
      delete next.metadata.resourceVersion;
      next.metadata.namespace = namespace;
      if (existing) {
        const prev = JSON.parse(existing.object) as KubeObject;
        next.metadata.uid = prev.metadata.uid!;
        next.metadata.creationTimestamp = prev.metadata.creationTimestamp ?? null;
        if (isDeepStrictEqual(prev, next) && existing.source === source && existing.origin === origin) {
          return 'UNCHANGED';
        }
      } else {
        next.metadata.uid ??= randomUUID();
        next.metadata.creationTimestamp ??= new Date(this.#now()).toISOString().replace(/\.\d+Z$/, 'Z');
      }
      const rv = this.#rv.next();
      this.#sqlite
        .prepare(
          `INSERT INTO objects (kind, namespace, name, uid, source, origin, object, resource_version)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(kind, namespace, name) DO UPDATE SET source = excluded.source,
           origin = excluded.origin, object = excluded.object, resource_version = excluded.resource_version`,
        )
        .run(kind, namespace, name, next.metadata.uid!, source, origin, JSON.stringify(next), rv);
      const type = existing ? 'MODIFIED' : 'ADDED';
      this.#hub.publish(kind, {
        type,
        rv,
        object: { ...next, metadata: { ...next.metadata, resourceVersion: String(rv) } },
      });
      return type;
    })();
  }

  remove(kind: string, namespace: string, name: string): boolean {
    return this.#sqlite.transaction(() => {
      const row = this.#get.get(kind, namespace, name);
      if (!row) return false;
      const rv = this.#rv.next();
      this.#sqlite
        .prepare('DELETE FROM objects WHERE kind = ? AND namespace = ? AND name = ?')
        .run(kind, namespace, name);
      const last = served(row);
      last.metadata.resourceVersion = String(rv);
      this.#hub.publish(kind, { type: 'DELETED', rv, object: last });
      return true;
    })();
  }
}

function served(row: ObjectRow): KubeObject {
  const obj = JSON.parse(row.object) as KubeObject;
  obj.metadata.resourceVersion = String(row.resource_version);
  return obj;
}
