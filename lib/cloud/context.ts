// What every cloud-link part shares: the kubeconfig, the node name, the link state and one HTTP
// transport to the API server (one HTTP/2 connection carries requests and watches, lib/cloud/h2.ts). Every request
// through it reports to the link: an answer marks it online, a failure to get one marks it
// offline at once (and drops the connection, so watches on it end and restart after reconnect).

import type { Readable } from 'node:stream';
import type { Clock } from '#lib/clock.ts';
import type { Logger } from '#lib/log.ts';
import { H2Client } from './h2.ts';
import { type Kubeconfig, KubeconfigError, kubeconfigCredentials } from './kubeconfig.ts';
import { CloudLink } from './link.ts';

/** A Kubernetes `Status` answer (or any HTTP error) from the API server. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly status?: unknown,
  ) {
    super(message);
  }
}

/** No answer from the API server (refused, reset, TLS failure, timeout). */
export class UnreachableError extends Error {
  override name = 'UnreachableError';
}

export interface RequestOptions {
  method?: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** A JSON body (objects are serialized). */
  body?: unknown;
  /** Default `application/json`; patches pass `application/strategic-merge-patch+json` etc. */
  contentType?: string;
  accept?: string;
  /** Time until the response headers (default 10 s, kubelet's request timeout). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Whether a failure marks the link offline (default true; pass-through requests pass false). */
  reportToLink?: boolean;
  /** Extra headers (pass-through). */
  headers?: Record<string, string>;
}

export interface RawResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable & { text(): Promise<string>; json(): Promise<unknown>; dump(): Promise<void> };
}

/** Outbox figures the cloud-pods part reports for health and metrics. */
export interface OutboxStats {
  depth: number;
  /** Age in seconds of the oldest queued entry; 0 when empty. */
  oldestAgeSeconds: number;
}

/** The shared handle of the cloud link. */
export interface CloudContext {
  kubeConfig: Kubeconfig;
  nodeName: string;
  /** The API server's base URL (no trailing slash). */
  server: string;
  link: CloudLink;
  clock: Clock;
  log: Logger;
  /** A JSON request; throws ApiError on an HTTP error, UnreachableError without an answer. */
  request<T = unknown>(path: string, opts?: RequestOptions): Promise<T>;
  /** The raw response (any status), for streams and pass-through; throws UnreachableError. */
  raw(path: string, opts?: RequestOptions): Promise<RawResponse>;
  /** Re-reads credentials (after a certificate rotation) and reconnects. */
  reloadCredentials(kubeConfig?: Kubeconfig): Promise<void>;
  /** The outbox figures, once the outbox registered its reader. */
  outboxStats(): OutboxStats | undefined;
  setOutboxStats(fn: () => OutboxStats): void;
  close(): Promise<void>;
}

export interface CloudContextOptions {
  kubeConfig: Kubeconfig;
  nodeName: string;
  clock: Clock;
  log: Logger;
}

interface Transport {
  client: H2Client;
  headers: Record<string, string>;
}

function makeTransport(kc: Kubeconfig, server: string): Transport {
  // As @kubernetes/client-node did before: credentials go over TLS unless the kubeconfig says
  // insecure-skip-tls-verify, the one way to ask for a plain http:// server.
  if (server.startsWith('http:') && !kc.cluster.insecureSkipTlsVerify)
    throw new KubeconfigError(
      `kubeconfig ${kc.source}: cluster "${kc.cluster.name}": server ${server} is plain http; ` +
        'the cloud link needs https:// (or insecure-skip-tls-verify: true)',
    );
  const { headers, ...tls } = kubeconfigCredentials(kc);
  return { client: new H2Client(server, tls), headers };
}

/** Builds the context: the transport from the kubeconfig's current context. */
export async function createCloudContext(o: CloudContextOptions): Promise<CloudContext> {
  let kc = o.kubeConfig;
  const server = kc.cluster.server;
  const link = new CloudLink(o.clock);
  let transport = makeTransport(kc, server);
  let outbox: (() => OutboxStats) | undefined;
  let closed = false;

  // Offline drops the connection: a half-dead session must not carry the next attempts, and
  // every watch on it ends at once (its owner waits for the link, then re-watches).
  link.onChange((s) => {
    if (s.state === 'offline' && !closed) transport.client.drop();
  });
  const rebuild = async (next: Kubeconfig) => {
    const t = makeTransport(next, server);
    const old = transport.client;
    transport = t;
    kc = next;
    void old.close();
  };

  const raw = async (path: string, opts: RequestOptions = {}): Promise<RawResponse> => {
    const url = new URL(server + path);
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = {
      ...transport.headers,
      accept: opts.accept ?? 'application/json',
      'user-agent': `outpost/${o.nodeName}`,
    };
    for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k.toLowerCase()] = v;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['content-type'] = opts.contentType ?? 'application/json';
    }
    const method = opts.method ?? 'GET';
    try {
      const res = await transport.client.request({
        method,
        path: url.pathname + url.search,
        headers,
        ...(body !== undefined ? { body } : {}),
        timeoutMs: opts.timeoutMs ?? 10_000,
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      if (opts.reportToLink !== false) link.markOnline();
      return res as unknown as RawResponse;
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      const err = new UnreachableError(`${method} ${path}: ${(e as Error).message}`);
      if (opts.reportToLink !== false) link.markOffline(err);
      throw err;
    }
  };

  const ctx: CloudContext = {
    get kubeConfig() {
      return kc;
    },
    nodeName: o.nodeName,
    server,
    link,
    clock: o.clock,
    log: o.log,
    raw,
    async request<T>(path: string, opts: RequestOptions = {}): Promise<T> {
      const res = await raw(path, opts);
      let text: string;
      try {
        text = await res.body.text();
      } catch (e) {
        const err = new UnreachableError(`${opts.method ?? 'GET'} ${path}: ${(e as Error).message}`);
        if (opts.reportToLink !== false) link.markOffline(err);
        throw err;
      }
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      if (res.statusCode >= 400) {
        const s = (parsed ?? {}) as { reason?: string; message?: string };
        throw new ApiError(
          res.statusCode,
          s.reason ?? `HTTP${res.statusCode}`,
          s.message ?? (text.slice(0, 200) || `HTTP ${res.statusCode}`),
          parsed,
        );
      }
      return parsed as T;
    },
    async reloadCredentials(next) {
      await rebuild(next ?? kc);
    },
    outboxStats: () => outbox?.(),
    setOutboxStats(fn) {
      outbox = fn;
    },
    async close() {
      closed = true;
      transport.client.drop();
    },
  };
  return ctx;
}
