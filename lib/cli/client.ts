import { Agent, request } from 'undici';
import type { Status } from '#lib/kube/status.ts';

/** A failure the CLI prints the way kubectl does and exits non-zero for. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** An invalid flag, argument or environment value: exit code 2, before anything is asked of the server. */
export const usageError = (message: string): CliError => new CliError(message, 2);

export interface ClientOptions {
  server: string;
  token?: string | undefined;
  /** CA to verify an https server with, and a client certificate to present. */
  tls?: { ca?: Buffer | undefined; cert?: Buffer | undefined; key?: Buffer | undefined } | undefined;
}

export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

/** kubectl's line for a Status answer: `Error from server (NotFound): pods "x" not found`. */
export function statusLine(status: Partial<Status>, httpCode: number): string {
  const reason = status.reason || (httpCode >= 500 ? 'InternalError' : 'BadRequest');
  return `Error from server (${reason}): ${status.message ?? `an error on the server (HTTP ${httpCode})`}`;
}

/** A thin HTTP client for Outpost's API that turns Status answers and refused connections into CliErrors. */
export class ApiClient {
  readonly #server: URL;
  readonly #headers: Record<string, string>;
  readonly #dispatcher: Agent;

  constructor(opts: ClientOptions) {
    this.#server = new URL(opts.server);
    const tls = opts.tls ?? {};
    this.#dispatcher = new Agent({
      connect: {
        timeout: 5000,
        ...(tls.ca ? { ca: tls.ca } : {}),
        ...(tls.cert ? { cert: tls.cert } : {}),
        ...(tls.key ? { key: tls.key } : {}),
      },
    });
    this.#headers = opts.token ? { authorization: `Bearer ${opts.token}` } : {};
  }

  /** Sends a request; returns the response for 2xx, throws a CliError otherwise. */
  async send(
    method: string,
    path: string,
    opts: {
      accept?: string;
      body?: unknown;
      /** Of the JSON body; default `application/json` (e.g. `application/merge-patch+json`). */
      contentType?: string;
      query?: Record<string, string | string[] | undefined>;
      /** Longest silence allowed between body chunks, in ms; 0 for streams that may idle (logs -f). */
      bodyTimeout?: number;
    } = {},
  ) {
    const url = new URL(path, this.#server);
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      for (const item of Array.isArray(v) ? v : v === undefined ? [] : [v]) url.searchParams.append(k, item);
    }
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(url, {
        method: method as 'GET',
        dispatcher: this.#dispatcher,
        headers: {
          ...this.#headers,
          accept: opts.accept ?? 'application/json',
          ...(opts.body === undefined ? {} : { 'content-type': opts.contentType ?? 'application/json' }),
        },
        ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }),
        ...(opts.bodyTimeout === undefined ? {} : { bodyTimeout: opts.bodyTimeout }),
      });
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'ECONNREFUSED') {
        throw new CliError(
          `The connection to the server ${url.host} was refused - did you specify the right host or port?`,
        );
      }
      throw new CliError(`Unable to connect to the server: ${(e as Error).message}`);
    }
    if (res.statusCode >= 300) {
      const text = await res.body.text();
      let status: Partial<Status> = {};
      try {
        status = JSON.parse(text) as Status;
      } catch {
        status = { message: text.trim() || `the server responded with HTTP ${res.statusCode}` };
      }
      throw new CliError(statusLine(status, res.statusCode));
    }
    return res;
  }

  async json<T>(path: string, opts: Parameters<ApiClient['send']>[2] = {}): Promise<T> {
    const res = await this.send('GET', path, opts);
    return (await res.body.json()) as T;
  }

  async close(): Promise<void> {
    await this.#dispatcher.close();
  }
}
