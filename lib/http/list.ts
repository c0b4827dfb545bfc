import { stream } from 'hono/streaming';
import * as z from 'zod';
import { parseFieldSelector, parseLabelSelector, requiredEquals } from '#lib/kube/selectors.ts';
import { badRequest, gone, StatusError } from '#lib/kube/status.ts';
import { type IncludeObject, parseIncludeObject, type Table, type ToTableOptions } from '#lib/kube/table.ts';
import type { KubeObject } from '#lib/kube/types.ts';
import type { WatchEvent } from '#lib/store/watch-hub.ts';
import type { AppContext } from './env.ts';
import { wantsTable } from './negotiate.ts';

// kube-apiserver takes anything but `0` and `false` as true (Python's client sends `True`).
const boolish = z.string().optional();

/** The query parameters of a list or watch call (metav1.ListOptions). */
export const listQuery = z.object({
  labelSelector: z.string().optional(),
  fieldSelector: z.string().optional(),
  limit: z.coerce.number().int().min(0).optional(),
  continue: z.string().optional(),
  watch: boolish,
  resourceVersion: z.string().regex(/^\d*$/, 'must be a non-negative integer').optional(),
  resourceVersionMatch: z.enum(['', 'Exact', 'NotOlderThan']).optional(),
  timeoutSeconds: z.coerce.number().int().min(0).optional(),
  includeObject: z.enum(['', 'None', 'Metadata', 'Object']).optional(),
  allowWatchBookmarks: boolish,
  sendInitialEvents: boolish,
});
export type ListQuery = z.infer<typeof listQuery>;

export interface Page<T> {
  items: T[];
  resourceVersion: number;
  /** The key to continue after, when more items remain. */
  next?: [string, string] | undefined;
}

/** A resource that can be listed and watched through the Kubernetes list conventions. */
export interface Listable<T extends KubeObject> {
  resource: string;
  listKind: string;
  /** The list's apiVersion: `v1` unless given (e.g. `devices.kubeedge.io/v1beta1`). */
  apiVersion?: string;
  fields: Record<string, (obj: T) => string | undefined>;
  /** Reads a page; `eq` carries the selector's `=` terms the store may push down into SQL. */
  read(
    namespace: string | undefined,
    eq: Map<string, string>,
    after?: [string, string],
    limit?: number,
  ): Page<T>;
  table(items: readonly T[], now: number, opts: ToTableOptions): Table;
  /** The item's JSON as a list item (see `listItem`) in UTF-8, when the store keeps it encoded. */
  encode?(item: T): Uint8Array;
  /** The item's JSON whole (kind and apiVersion included), as a watch event carries it. */
  encodeObject?(item: T): string;
}

/**
 * Each event's line as JSON watchers send it, encoded once however many watchers send it: the
 * hub hands the same event object to every watcher of the resource, and with a store that keeps
 * the object encoded (pods) no watcher serializes it at all.
 */
const eventLines = new WeakMap<object, Uint8Array>();
const utf8 = new TextEncoder();
const COMMA = utf8.encode(',');
const END_OF_LIST = utf8.encode(']}');

/** The same for Table watchers (kubectl get -w), by the table's options: one row rendered per event. */
const tableLines = new WeakMap<object, Map<string, Uint8Array>>();

function tableLine<T extends KubeObject>(
  r: Listable<T>,
  ev: WatchEvent<T>,
  includeObject: IncludeObject,
  noHeaders: boolean,
  now: () => number,
): Uint8Array {
  let lines = tableLines.get(ev);
  if (!lines) {
    lines = new Map();
    tableLines.set(ev, lines);
  }
  const key = `${includeObject}:${noHeaders}`;
  let line = lines.get(key);
  if (!line) {
    const object = r.table([ev.object], now(), { includeObject, resourceVersion: String(ev.rv), noHeaders });
    line = utf8.encode(`${JSON.stringify({ type: ev.type, object })}\n`);
    lines.set(key, line);
  }
  return line;
}

function eventLine<T extends KubeObject>(r: Listable<T>, ev: WatchEvent<T>): Uint8Array {
  let line = eventLines.get(ev);
  if (!line) {
    const object = r.encodeObject ? r.encodeObject(ev.object) : JSON.stringify(ev.object);
    line = utf8.encode(`{"type":${JSON.stringify(ev.type)},"object":${object}}\n`);
    eventLines.set(ev, line);
  }
  return line;
}

const truthy = (v: string | undefined) => v !== undefined && v !== '' && v !== '0' && v !== 'false';

function decodeContinue(token: string): [string, string] {
  try {
    const v = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && v.every((s) => typeof s === 'string'))
      return v as [string, string];
  } catch {}
  throw badRequest('continue key is not valid: illegal base64 data or malformed key');
}

/** Serves `GET` on a collection: a list (JSON or Table, filtered, paginated) or, with `watch`, a watch. */
export function listOrWatch<T extends KubeObject>(
  c: AppContext,
  r: Listable<T>,
  namespace: string | undefined,
  q: ListQuery,
) {
  const labels = parseLabelSelector(q.labelSelector ?? '');
  const fields = parseFieldSelector(
    q.fieldSelector ?? '',
    r.fields as Record<string, (obj: unknown) => string | undefined>,
    r.resource,
  );
  const includeObject = parseIncludeObject(q.includeObject);
  const matches = (obj: T) =>
    (namespace === undefined || obj.metadata.namespace === namespace) &&
    labels.matches(obj.metadata.labels) &&
    fields.matches(obj);
  if (truthy(q.watch)) return watch(c, r, namespace, q, matches, includeObject);

  const eq = requiredEquals(fields);
  const after = q.continue ? decodeContinue(q.continue) : undefined;
  const limit = q.limit || undefined;
  const filtered = labels.empty && fields.empty;
  // With selectors the page is filled after filtering, so read everything past the cursor.
  const page = r.read(namespace, eq, after, filtered ? limit : undefined);
  let items = filtered ? page.items : page.items.filter(matches);
  let next = filtered ? page.next : undefined;
  if (!filtered && limit && items.length > limit) {
    items = items.slice(0, limit);
    const last = items[limit - 1]!.metadata;
    next = [last.namespace ?? '', last.name ?? ''];
  }
  const rv = String(page.resourceVersion);
  const token = next ? Buffer.from(JSON.stringify(next)).toString('base64url') : undefined;
  if (wantsTable(c)) {
    return c.json(r.table(items, c.get('now')(), { includeObject, resourceVersion: rv, continue: token }));
  }
  const metadata: Record<string, string> = { resourceVersion: rv };
  if (token) metadata.continue = token;
  const apiVersion = r.apiVersion ?? 'v1';
  if (!r.encode)
    return c.json({ kind: r.listKind, apiVersion, metadata, items: items.map((i) => listItem(r, i)) });
  // The body is put together from the items' cached bytes: one copy, outside the V8 heap.
  const head = JSON.stringify({ kind: r.listKind, apiVersion, metadata }).slice(0, -1);
  const parts: Uint8Array[] = [utf8.encode(`${head},"items":[`)];
  for (let i = 0; i < items.length; i++) {
    if (i > 0) parts.push(COMMA);
    parts.push(r.encode(items[i]!));
  }
  parts.push(END_OF_LIST);
  return c.body(Buffer.concat(parts), 200, { 'Content-Type': 'application/json' });
}

/**
 * An item as a list carries it: built-in kinds without kind and apiVersion (kube-apiserver leaves
 * them to the list's kind; every client fills them in), custom resources whole, as for CRDs.
 */
function listItem<T extends KubeObject>(r: Listable<T>, item: T): T {
  return r.apiVersion !== undefined ? item : builtinItem(item);
}

function builtinItem<T extends KubeObject>(item: T): T {
  const { kind: _k, apiVersion: _v, ...rest } = item;
  return rest as T;
}

/** A core/v1 list built here (deletecollection's answer), its items as kube-apiserver lists them. */
export function coreList<T extends KubeObject>(
  listKind: string,
  resourceVersion: number,
  items: readonly T[],
) {
  return {
    kind: listKind,
    apiVersion: 'v1',
    metadata: { resourceVersion: String(resourceVersion) },
    items: items.map(builtinItem),
  };
}

function watch<T extends KubeObject>(
  c: AppContext,
  r: Listable<T>,
  namespace: string | undefined,
  q: ListQuery,
  matches: (obj: T) => boolean,
  includeObject: IncludeObject,
) {
  const store = c.get('store');
  const shutdown = c.get('shutdown');
  const now = c.get('now');
  const table = wantsTable(c);
  const rv = q.resourceVersion ? Number(q.resourceVersion) : 0;
  const initial: WatchEvent<T>[] = [];
  let since = rv;
  const streamingList = truthy(q.sendInitialEvents);
  if (rv === 0 || streamingList) {
    // No resourceVersion: start with synthetic ADDED events for what exists now, as the API server does.
    const page = r.read(namespace, new Map());
    since = page.resourceVersion;
    for (const obj of page.items) if (matches(obj)) initial.push({ type: 'ADDED', rv: since, object: obj });
  }
  if (since > store.rv.current)
    throw gone(`too large resource version: ${since}, current: ${store.rv.current}`);
  const pending: Outgoing<T>[] = [...initial];
  // client-go's streaming list waits for this bookmark before it treats the list as complete.
  if (streamingList && truthy(q.allowWatchBookmarks)) pending.push(bookmark(r, since, true));
  let wake: (() => void) | undefined;
  let unsubscribe: () => void;
  try {
    unsubscribe = store.hub.subscribe(r.resource, since, (ev) => {
      if (!matches(ev.object as T)) return;
      pending.push(ev as WatchEvent<T>);
      wake?.();
    });
  } catch (e) {
    // Too old: the API server answers 200 with one ERROR event (410 Expired) and ends the watch.
    if (!(e instanceof StatusError) || e.code !== 410) throw e;
    return c.body(`${JSON.stringify({ type: 'ERROR', object: e.toStatus() })}\n`, 200, {
      'Content-Type': 'application/json',
    });
  }
  c.header('Content-Type', 'application/json');
  c.header('Cache-Control', 'no-cache, private');
  return stream(c, async (s) => {
    let open = true;
    const stop = () => {
      open = false;
      wake?.();
    };
    s.onAbort(stop);
    const leave = onShutdown(shutdown, stop);
    const timer = q.timeoutSeconds ? setTimeout(stop, q.timeoutSeconds * 1000) : undefined;
    let first = true;
    try {
      while (open) {
        while (open && pending.length) {
          const ev = pending.shift()!;
          if (ev.type === 'BOOKMARK') {
            await s.write(`${JSON.stringify({ type: ev.type, object: ev.object })}\n`);
            continue;
          }
          if (!table) {
            await s.write(eventLine(r, ev));
            continue;
          }
          await s.write(tableLine(r, ev, includeObject, !first, now));
          first = false;
        }
        if (open) await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      clearTimeout(timer);
      unsubscribe();
      leave();
    }
  });
}

/**
 * The live watches' ends, by shutdown signal: one `abort` listener per signal however many watches
 * are open (an AbortSignal with more than ten listeners makes Node warn of a leak).
 */
const watchesBySignal = new WeakMap<AbortSignal, Set<() => void>>();

function onShutdown(signal: AbortSignal, stop: () => void): () => void {
  if (signal.aborted) {
    stop();
    return () => {};
  }
  let stops = watchesBySignal.get(signal);
  if (!stops) {
    const all = new Set<() => void>();
    signal.addEventListener(
      'abort',
      () => {
        for (const end of all) end();
        all.clear();
      },
      { once: true },
    );
    watchesBySignal.set(signal, all);
    stops = all;
  }
  stops.add(stop);
  return () => stops.delete(stop);
}

type Outgoing<T> = WatchEvent<T> | { type: 'BOOKMARK'; rv: number; object: unknown };

/** A BOOKMARK event: an object of the resource's kind carrying only a resourceVersion. */
function bookmark<T extends KubeObject>(r: Listable<T>, rv: number, initialEnd: boolean): Outgoing<T> {
  const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
  if (initialEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
  return {
    type: 'BOOKMARK',
    rv,
    object: { kind: r.listKind.replace(/List$/, ''), apiVersion: r.apiVersion ?? 'v1', metadata },
  };
}
