// The app's router: Hono's TrieRouter, with the latest matches kept. Outpost's routes cannot use
// Hono's RegExpRouter (its fastest: a static segment beside a parameter with children, such as
// `pods/restart` beside `pods/:name/eviction`, is beyond it), and a trie search splits the path,
// walks it and sorts what it found on every request: 7-8 µs of a GET's 250-300 µs of CPU under
// the unit's V8 flags, which leave the agent's code unoptimized (docs/performance.md#api-reads-watch-latency-watchers).
// Clients mostly ask for the same few paths again (a watch, a poll, a follower), and a match
// depends on nothing but the method, the path and the routes added.
import type { Result, Router } from 'hono/router';
import { TrieRouter } from 'hono/router/trie-router';

/** Matches kept: a handful in use at a time; a scan of many paths only cycles through them. */
export const MATCHES_KEPT = 128;

export class MemoRouter<T> implements Router<T> {
  readonly name = 'MemoRouter';
  readonly #trie = new TrieRouter<T>();
  readonly #kept = new Map<string, Result<T>>();

  /** How many matches are kept now. */
  get size(): number {
    return this.#kept.size;
  }

  add(method: string, path: string, handler: T): void {
    this.#kept.clear();
    this.#trie.add(method, path, handler);
  }

  /** The trie's result, shared by every request of the same method and path (Hono only reads it). */
  match(method: string, path: string): Result<T> {
    const key = `${method} ${path}`;
    let result = this.#kept.get(key);
    if (result) return result;
    result = this.#trie.match(method, path);
    // The oldest match goes first: Maps iterate in insertion order.
    if (this.#kept.size >= MATCHES_KEPT) this.#kept.delete(this.#kept.keys().next().value!);
    this.#kept.set(key, result);
    return result;
  }
}
