// The state of the link to the API server: online while requests get answers, offline from the
// first failed request, watch or lease renewal until the reconnector gets an answer again.
import type { Clock } from '#lib/clock.ts';

export type LinkState = 'online' | 'offline';

/** A snapshot of the link for /readyz, /metrics and `outpost status`. */
export interface LinkSnapshot {
  state: LinkState;
  /** Wall-clock ms of the last answer from the API server (any HTTP status), if ever. */
  lastContact: number | undefined;
  /** Why the link went offline (the last failure), while offline. */
  lastError: string | undefined;
  /** Wall-clock ms of the last state change. */
  since: number;
}

type Listener = (s: LinkSnapshot) => void;

/** Online/offline state with change listeners; starts offline until the first answer. */
export class CloudLink {
  private current: LinkSnapshot;
  private readonly listeners = new Set<Listener>();
  private waiters: (() => void)[] = [];

  constructor(private readonly clock: Pick<Clock, 'now'>) {
    this.current = {
      state: 'offline',
      lastContact: undefined,
      lastError: 'not connected yet',
      since: clock.now(),
    };
  }

  get state(): LinkState {
    return this.current.state;
  }

  get online(): boolean {
    return this.current.state === 'online';
  }

  snapshot(): LinkSnapshot {
    return { ...this.current };
  }

  /** The API server answered: records the contact, and goes online if offline. */
  markOnline(): void {
    const now = this.clock.now();
    if (this.current.state === 'online') {
      this.current.lastContact = now;
      return;
    }
    this.current = { state: 'online', lastContact: now, lastError: undefined, since: now };
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
    this.emit();
  }

  /** A request, watch or renewal failed to get an answer: offline at once. */
  markOffline(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    if (this.current.state === 'offline') {
      this.current.lastError = message;
      return;
    }
    this.current = { ...this.current, state: 'offline', lastError: message, since: this.clock.now() };
    this.emit();
  }

  /** Calls `fn` on every state change; returns the unsubscribe function. */
  onChange(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Resolves once online (at once when online); rejects when `signal` aborts. */
  waitOnline(signal?: AbortSignal): Promise<void> {
    if (this.online) return Promise.resolve();
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        this.waiters = this.waiters.filter((w) => w !== done);
        reject(signal?.reason);
      };
      const done = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.waiters.push(done);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private emit(): void {
    const s = this.snapshot();
    for (const fn of this.listeners) {
      try {
        fn(s);
      } catch {
        // A listener's failure must not stop the others or the caller.
      }
    }
  }
}

/** Go-style short duration (850ms, 12s, 2m5s). */
const ago = (ms: number): string => {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ''}`;
};

/** One line on the link for /readyz?verbose and `outpost status`. */
export function describeLink(
  s: LinkSnapshot,
  outbox: { depth: number; oldestAgeSeconds: number } | undefined,
  now: number,
): string {
  const parts = [
    s.state === 'online'
      ? 'online'
      : `offline for ${ago(now - s.since)}${s.lastError ? `: ${s.lastError}` : ''}`,
  ];
  parts.push(s.lastContact === undefined ? 'no contact yet' : `last contact ${ago(now - s.lastContact)} ago`);
  if (outbox)
    parts.push(
      `outbox ${outbox.depth}${outbox.depth ? ` (oldest ${ago(outbox.oldestAgeSeconds * 1000)})` : ''}`,
    );
  return parts.join(', ');
}
