import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Metabase } from '#db/open.ts';
import type { Sqlite, Statement } from '#db/sqlite.ts';
import { applyMergePatch, createMergePatch } from '#lib/kube/merge-patch.ts';
import type { KubeObject } from '#lib/kube/types.ts';
import type { Source } from './pods.ts';
import type { ResourceVersions } from './resource-version.ts';
import type { WatchHub } from './watch-hub.ts';

interface Row {
  uid: string;
  namespace: string;
  name: string;
  source: Source;
  origin: string | null;
  object: string;
  resource_version: number;
}

/**
 * What the node keeps about an object besides the object itself, stored beside it in the same JSON
 * (under `_outpost`) and never served: the generation its mapper last acknowledged, and the manifest
 * last applied, so a manifest sync changes only what the manifest changed and keeps API edits.
 */
export interface Bookkeeping {
  pushedGeneration?: number;
  applied?: KubeObject;
}

export interface CrdRecord<T extends KubeObject> {
  object: T;
  source: Source;
  origin: string | null;
  book: Bookkeeping;
}

export interface CrdTable<T> {
  table: 'devices' | 'device_models';
  /** The watch channel and the plural resource name. */
  resource: string;
  apiVersion: string;
  kind: string;
  /** The filter columns derived from the object (besides namespace and name). */
  columns(obj: T): Record<string, string | null>;
}

const now8601 = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** A custom resource stored whole in its own table: versioned, watched, with node-private bookkeeping. */
export class CrdStore<T extends KubeObject & { spec: unknown; status?: unknown }> {
  protected readonly sqlite: Sqlite;
  protected readonly rv: ResourceVersions;
  protected readonly hub: WatchHub;
  protected readonly now: () => number;
  readonly #t: CrdTable<T>;
  readonly #get: Statement<[string, string], Row>;

  constructor(mb: Metabase, rv: ResourceVersions, hub: WatchHub, now: () => number, table: CrdTable<T>) {
    this.sqlite = mb.sqlite;
    this.rv = rv;
    this.hub = hub;
    this.now = now;
    this.#t = table;
    this.#get = mb.sqlite.prepare(`SELECT * FROM ${table.table} WHERE namespace = ? AND name = ?`);
  }

  /** The resourceVersion a read now is consistent at. */
  get resourceVersion(): number {
    return this.rv.current;
  }

  /** The served object, or undefined. */
  get(namespace: string, name: string): T | undefined {
    const row = this.#get.get(namespace, name);
    return row && this.#decode(row).object;
  }

  /** The object with its source and bookkeeping. */
  record(namespace: string, name: string): CrdRecord<T> | undefined {
    const row = this.#get.get(namespace, name);
    return row && this.#decode(row);
  }

  /** Served objects in (namespace, name) order, narrowed by namespace and filter columns. */
  list(
    opts: { namespace?: string | undefined; where?: Record<string, string>; after?: [string, string] } = {},
  ): { items: T[]; resourceVersion: number } {
    return {
      items: this.records(opts).map((r) => r.object),
      resourceVersion: this.rv.current,
    };
  }

  records(
    opts: {
      namespace?: string | undefined;
      source?: Source;
      where?: Record<string, string>;
      after?: [string, string];
    } = {},
  ): CrdRecord<T>[] {
    const where: string[] = [];
    const params: string[] = [];
    const add = (column: string, value: string) => {
      where.push(`${column} = ?`);
      params.push(value);
    };
    if (opts.namespace !== undefined) add('namespace', opts.namespace);
    if (opts.source) add('source', opts.source);
    for (const [column, value] of Object.entries(opts.where ?? {})) add(column, value);
    if (opts.after) {
      where.push('(namespace, name) > (?, ?)');
      params.push(...opts.after);
    }
    const sql = `SELECT * FROM ${this.#t.table}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}
      ORDER BY namespace, name`;
    return this.sqlite
      .prepare<string[], Row>(sql)
      .all(...params)
      .map((r) => this.#decode(r));
  }

  /**
   * Applies a manifest's object. New: stored as is (generation 1). Known: the changes between the
   * manifest applied last time and this one are merged into the live object, so edits made through
   * the API to fields the manifest did not change survive. Status is never taken from a manifest.
   */
  apply(obj: T, source: Source, origin: string | null): 'ADDED' | 'MODIFIED' | 'UNCHANGED' {
    return this.sqlite.transaction(() => {
      const manifest = this.#canonical(obj);
      const existing = this.record(manifest.metadata.namespace!, manifest.metadata.name!);
      if (!existing) {
        const next = structuredClone(manifest);
        next.metadata.uid ??= randomUUID();
        next.metadata.creationTimestamp ??= now8601(this.now());
        next.metadata.generation = 1;
        this.write(next, source, origin, { applied: manifest }, 'ADDED');
        return 'ADDED';
      }
      const same = existing.source === source && existing.origin === origin;
      if (same && isDeepStrictEqual(existing.book.applied, manifest)) return 'UNCHANGED';
      const live = this.#canonical(existing.object);
      const merged = (
        existing.book.applied
          ? applyMergePatch(live, createMergePatch(existing.book.applied, manifest))
          : manifest
      ) as T;
      const next = this.#carry(merged, existing.object);
      this.write(next, source, origin, { ...existing.book, applied: manifest }, 'MODIFIED');
      return 'MODIFIED';
    })();
  }

  /**
   * Stores a new object (a create through the API): generation 1, a uid and the creation time.
   * Undefined when the name is taken.
   */
  create(obj: T, source: Source): T | undefined {
    return this.sqlite.transaction(() => {
      const next = this.#canonical(obj);
      if (this.record(next.metadata.namespace!, next.metadata.name!)) return undefined;
      next.metadata.uid = randomUUID();
      next.metadata.creationTimestamp = now8601(this.now());
      next.metadata.generation = 1;
      return this.write(next, source, null, {}, 'ADDED');
    })();
  }

  /**
   * Replaces the object's metadata and spec (status is kept), bumping metadata.generation when the
   * spec changed. Returns the stored object, unchanged (and unwritten) when nothing differs.
   */
  replace(obj: T, book?: (prev: Bookkeeping, generation: number) => Bookkeeping): T | undefined {
    return this.sqlite.transaction(() => {
      const ns = obj.metadata.namespace ?? 'default';
      const existing = this.record(ns, obj.metadata.name ?? '');
      if (!existing) return undefined;
      const next = this.#carry(this.#canonical(obj), existing.object);
      const bk = book ? book(existing.book, next.metadata.generation ?? 1) : existing.book;
      const prev = structuredClone(existing.object);
      delete prev.metadata.resourceVersion;
      if (isDeepStrictEqual(prev, next) && isDeepStrictEqual(bk, existing.book)) return existing.object;
      return this.write(next, existing.source, existing.origin, bk, 'MODIFIED');
    })();
  }

  /** Updates the bookkeeping alone: no new resourceVersion, no watch event. */
  setBook(namespace: string, name: string, update: (b: Bookkeeping) => Bookkeeping): void {
    this.sqlite.transaction(() => {
      const existing = this.record(namespace, name);
      if (!existing) return;
      const stored = { ...existing.object, _outpost: update(existing.book) } as KubeObject;
      delete stored.metadata.resourceVersion;
      this.sqlite
        .prepare(`UPDATE ${this.#t.table} SET object = ? WHERE namespace = ? AND name = ?`)
        .run(JSON.stringify(stored), namespace, name);
    })();
  }

  /** Removes the object; returns what was served last. */
  remove(namespace: string, name: string): T | undefined {
    return this.sqlite.transaction(() => {
      const existing = this.record(namespace, name);
      if (!existing) return undefined;
      const rv = this.rv.next();
      this.sqlite
        .prepare(`DELETE FROM ${this.#t.table} WHERE namespace = ? AND name = ?`)
        .run(namespace, name);
      const last = existing.object;
      last.metadata.resourceVersion = String(rv);
      this.hub.publish(this.#t.resource, { type: 'DELETED', rv, object: last });
      return last;
    })();
  }

  /** Writes an object (call inside a transaction) with a new resourceVersion, and publishes it. */
  protected write(
    obj: T,
    source: Source,
    origin: string | null,
    book: Bookkeeping,
    type: 'ADDED' | 'MODIFIED',
  ): T {
    const rv = this.rv.next();
    const stored = { ...structuredClone(obj), _outpost: book } as KubeObject;
    delete stored.metadata.resourceVersion;
    const cols = this.#t.columns(obj);
    const names = Object.keys(cols);
    this.sqlite
      .prepare(
        `INSERT INTO ${this.#t.table} (uid, namespace, name, source, origin, object, resource_version${names.map((n) => `, ${n}`).join('')})
         VALUES (?, ?, ?, ?, ?, ?, ?${names.map(() => ', ?').join('')})
         ON CONFLICT(uid) DO UPDATE SET source = excluded.source, origin = excluded.origin, object = excluded.object,
           resource_version = excluded.resource_version${names.map((n) => `, ${n} = excluded.${n}`).join('')}`,
      )
      .run(
        obj.metadata.uid!,
        obj.metadata.namespace!,
        obj.metadata.name!,
        source,
        origin,
        JSON.stringify(stored),
        rv,
        ...Object.values(cols),
      );
    const served = structuredClone(obj);
    served.metadata.resourceVersion = String(rv);
    this.hub.publish(this.#t.resource, { type, rv, object: served });
    return served;
  }

  // The object as the node stores it: typed, defaulted namespace, no server-set fields, no status.
  #canonical(obj: T): T {
    const out = structuredClone(obj) as T & { _outpost?: unknown };
    delete out._outpost;
    delete out.status;
    out.apiVersion = this.#t.apiVersion;
    out.kind = this.#t.kind;
    out.metadata.namespace ||= 'default';
    for (const k of [
      'resourceVersion',
      'uid',
      'creationTimestamp',
      'generation',
      'managedFields',
      'selfLink',
    ])
      delete out.metadata[k];
    return out;
  }

  // Keeps what the server owns from the live object: uid, creation time, generation (bumped when the
  // spec changes) and status.
  #carry(next: T, live: T): T {
    const gen = live.metadata.generation ?? 1;
    next.metadata.uid = live.metadata.uid!;
    next.metadata.creationTimestamp = live.metadata.creationTimestamp ?? null;
    next.metadata.generation = isDeepStrictEqual(next.spec, live.spec) ? gen : gen + 1;
    if (live.status !== undefined) next.status = structuredClone(live.status);
    return next;
  }

  #decode(row: Row): CrdRecord<T> {
    const stored = JSON.parse(row.object) as T & { _outpost?: Bookkeeping };
    const book = stored._outpost ?? {};
    delete stored._outpost;
    stored.metadata.resourceVersion = String(row.resource_version);
    return { object: stored, source: row.source, origin: row.origin, book };
  }
}
