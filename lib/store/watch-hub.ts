import { gone } from '#lib/kube/status.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchEvent<T = unknown> {
  type: WatchEventType;
  /** The global resourceVersion of this change. */
  rv: number;
  object: T;
}

type Listener = (event: WatchEvent) => void;

interface Channel {
  buffer: WatchEvent[];
  /** Changes at or below this resourceVersion are no longer replayable. */
  floor: number;
  listeners: Set<Listener>;
}

/**
 * The in-process watch cache: a bounded ring of recent changes per resource, like the API
 * server's watch cache, so a watch from a recent resourceVersion replays what it missed.
 */
export class WatchHub {
  readonly #channels = new Map<string, Channel>();
  readonly #capacity: number;
  #rv: () => number;

  constructor(currentRv: () => number, capacity = 2000) {
    this.#rv = currentRv;
    this.#capacity = capacity;
  }

  #channel(resource: string): Channel {
    let ch = this.#channels.get(resource);
    if (!ch) {
      ch = { buffer: [], floor: this.#rv(), listeners: new Set() };
      this.#channels.set(resource, ch);
    }
    return ch;
  }

  /** Records a committed change and hands it to every live watcher of the resource. */
  publish(resource: string, event: WatchEvent): void {
    const ch = this.#channel(resource);
    ch.buffer.push(event);
    if (ch.buffer.length > this.#capacity) ch.floor = ch.buffer.shift()!.rv;
    for (const listener of ch.listeners) listener(event);
  }

  /**
   * Replays the changes after `sinceRv` and then follows new ones; throws 410 Expired when
   * `sinceRv` is older than what is kept. Returns the function that stops the watch.
   */
  subscribe(resource: string, sinceRv: number, listener: Listener): () => void {
    const ch = this.#channel(resource);
    if (sinceRv < ch.floor) {
      throw gone(`too old resource version: ${sinceRv} (${ch.floor})`);
    }
    for (const event of ch.buffer) if (event.rv > sinceRv) listener(event);
    ch.listeners.add(listener);
    return () => ch.listeners.delete(listener);
  }

  /** Number of live watchers, for metrics and shutdown. */
  watchers(): number {
    let n = 0;
    for (const ch of this.#channels.values()) n += ch.listeners.size;
    return n;
  }
}
