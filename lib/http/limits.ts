import { tooManyRequests } from '#lib/kube/status.ts';

/** Caps how many long-lived streams of one kind (exec sessions, followed logs) run at once. */
export class Gate {
  #open = 0;

  constructor(
    readonly name: string,
    readonly max: number,
  ) {}

  /** Takes a slot or throws 429; the returned function gives it back (idempotent). */
  enter(): () => void {
    if (this.#open >= this.max) {
      throw tooManyRequests(`too many concurrent ${this.name} (limit ${this.max}); try again later`);
    }
    this.#open++;
    let left = false;
    return () => {
      if (!left) {
        left = true;
        this.#open--;
      }
    };
  }

  get open(): number {
    return this.#open;
  }
}

/**
 * Token buckets by key: `rate` tokens a second, up to `burst`; what the rate limiter and the
 * failed-authentication throttle share. Memory stays bounded under a flood of keys.
 */
class TokenBuckets {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    readonly rate: number,
    readonly burst: number,
    private readonly now: () => number,
  ) {}

  /** The tokens `key` has now (a full bucket for a key never seen). */
  tokens(key: string): number {
    const now = this.now();
    const b = this.#buckets.get(key);
    if (!b) return this.burst;
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.rate);
    b.at = now;
    return b.tokens;
  }

  /** Spends one token of `key` (never below zero); a bucket full again is forgotten. */
  spend(key: string): void {
    const tokens = Math.max(0, this.tokens(key) - 1);
    if (tokens >= this.burst) this.#buckets.delete(key);
    else this.#buckets.set(key, { tokens, at: this.now() });
    if (this.#buckets.size > 10_000) this.#buckets.clear();
  }

  /** Whole seconds until `key` has a token again (Retry-After). */
  retryAfter(key: string): number {
    return Math.ceil((1 - this.tokens(key)) / this.rate);
  }
}

/** A token bucket per client: `rate` requests a second, bursts up to `burst`. */
export class RateLimiter {
  readonly #buckets: TokenBuckets;

  constructor(
    readonly rate: number,
    readonly burst: number,
    now: () => number,
  ) {
    this.#buckets = new TokenBuckets(rate, burst, now);
  }

  /** Spends one token of `client`, or throws 429 with the seconds until the next one. */
  take(client: string): void {
    if (this.#buckets.tokens(client) < 1) {
      throw tooManyRequests(
        `rate limit of ${this.rate} requests/s exceeded for ${client}`,
        this.#buckets.retryAfter(client),
      );
    }
    this.#buckets.spend(client);
  }
}

/**
 * Failed authentication per source address: a source that failed `burst` times in a row waits,
 * one more attempt allowed every `1 / rate` seconds; until then its credentialed calls get 429
 * with Retry-After (as the API server's and kubelet's fronts answer floods). Loopback included.
 */
export class AuthThrottle {
  readonly #buckets: TokenBuckets;

  constructor(
    readonly rate: number,
    readonly burst: number,
    now: () => number,
  ) {
    this.#buckets = new TokenBuckets(rate, burst, now);
  }

  /** Throws 429 while `source` has no attempt left. */
  check(source: string): void {
    if (this.#buckets.tokens(source) < 1)
      throw tooManyRequests(
        `too many failed authentication attempts from ${source}; try again later`,
        this.#buckets.retryAfter(source),
      );
  }

  /** Counts a failed attempt of `source`. */
  failed(source: string): void {
    this.#buckets.spend(source);
  }
}

export interface Limits {
  exec: Gate;
  logs: Gate;
  /** Per-client limiter; loopback clients are exempt (local automation). */
  rate: RateLimiter | undefined;
  /** Failed authentication per source address (loopback too). */
  authFailures: AuthThrottle;
  maxBodyBytes: number;
}

/** The defaults: 10 failed authentications per source then 1/s, 16 exec sessions, 32 followed logs, 50 req/s (burst 100) per LAN client, 1 MiB bodies. */
export function defaultLimits(
  now: () => number,
  o: Partial<{ exec: number; logs: number; rate: number; maxBodyBytes: number }> = {},
): Limits {
  const rate = o.rate ?? 50;
  return {
    exec: new Gate('exec sessions', o.exec ?? 16),
    logs: new Gate('log streams', o.logs ?? 32),
    rate: rate > 0 ? new RateLimiter(rate, rate * 2, now) : undefined,
    // 10 failures in a row, then one attempt a second: 2,000 guesses take half an hour, not a second.
    authFailures: new AuthThrottle(1, 10, now),
    maxBodyBytes: o.maxBodyBytes ?? 1 << 20,
  };
}
