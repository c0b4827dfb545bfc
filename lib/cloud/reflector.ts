import type { KubeObject } from '#lib/kube/types.ts';

export type WatchType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent {
  type: WatchType;
  object: KubeObject & { code?: number; message?: string; reason?: string };
}

/** The watched collection as the API server offers it. */
export interface ListWatch {
  /** A consistent list (all pages) and the resourceVersion it is at. */
  list(): Promise<{ items: KubeObject[]; resourceVersion: string }>;
  /** Watches from `resourceVersion` until the server ends the stream; throws GoneError on HTTP 410. */
  watch(resourceVersion: string, signal: AbortSignal): AsyncIterable<WatchEvent>;
}

/** Where a reflector keeps what it saw; each call is one metabase transaction. */
export interface ReflectorStore {
  /** The resourceVersion to resume from (persisted), or undefined: list first. */
  resourceVersion(): string | undefined;
  /** The full set after a list: what is missing from it is gone. */
  replace(items: KubeObject[], resourceVersion: string): void;
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject, resourceVersion: string): void;
  /** A bookmark: nothing changed up to this resourceVersion. */
  bookmark(resourceVersion: string): void;
}

/** The resourceVersion asked for is older than the server keeps (410 Gone / Expired): list again. */
export class GoneError extends Error {
  override name = 'GoneError';
}

export interface ReflectorOptions {
  listWatch: ListWatch;
  store: ReflectorStore;
  /** Waits before retrying after a failure (attempt counts from 0); rejects when the signal aborts. */
  pause(attempt: number, signal: AbortSignal): Promise<void>;
  onError?(err: unknown): void;
}

/**
 * client-go's reflector, reduced to what a node needs: list once (or resume from the stored
 * resourceVersion without listing), then watch from the last resourceVersion seen (bookmarks
 * included), re-watching when the server ends the stream and listing again only on 410.
 */
export class Reflector {
  readonly #o: ReflectorOptions;
  /** LISTs made, for tests and the fleet budget (at most one per watch after a reconnect). */
  lists = 0;
  watches = 0;

  constructor(o: ReflectorOptions) {
    this.#o = o;
  }

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { listWatch, store } = this.#o;
    let rv = store.resourceVersion();
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (rv === undefined) {
          this.lists += 1;
          const l = await listWatch.list();
          store.replace(l.items, l.resourceVersion);
          rv = l.resourceVersion;
        }
        this.watches += 1;
        for await (const ev of listWatch.watch(rv, signal)) {
          failures = 0;
          if (ev.type === 'ERROR') {
            if (ev.object.code === 410) throw new GoneError(ev.object.message ?? 'resourceVersion expired');
            throw new Error(`watch error: ${ev.object.message ?? JSON.stringify(ev.object)}`);
          }
          const next = ev.object.metadata?.resourceVersion;
          if (!next) continue;
          rv = next;
          if (ev.type === 'BOOKMARK') store.bookmark(rv);
          else store.apply(ev.type, ev.object, rv);
        }
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof GoneError) {
          rv = undefined;
          continue;
        }
        this.#o.onError?.(err);
        try {
          await this.#o.pause(failures++, signal);
        } catch {
          return;
        }
      }
    }
  }
}
