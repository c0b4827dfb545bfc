import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import type { Status } from '#lib/kube/status.ts';
import { CliError } from './errors.ts';

export { CliError, usageError } from './errors.ts';

/** How to speak TLS to an https server: the CA, a client certificate, a kubeconfig's TLS settings. */
export interface ConnectionTls {
  ca?: Buffer | undefined;
  cert?: Buffer | undefined;
  key?: Buffer | undefined;
  /** insecure-skip-tls-verify: the server's certificate is not checked. */
  insecure?: boolean | undefined;
  /** tls-server-name: the name the server's certificate is checked against. */
  servername?: string | undefined;
}

/** node:tls options for those settings (the https agent's and the exec WebSocket's). */
export const tlsOptions = (t: ConnectionTls | undefined) => ({
  ...(t?.ca ? { ca: t.ca } : {}),
  ...(t?.cert ? { cert: t.cert } : {}),
  ...(t?.key ? { key: t.key } : {}),
  ...(t?.insecure ? { rejectUnauthorized: false } : {}),
  ...(t?.servername ? { servername: t.servername } : {}),
});

export interface ClientOptions {
  server: string;
  token?: string | undefined;
  /** CA to verify an https server with, and a client certificate to present. */
  tls?: ConnectionTls | undefined;
  /** A unix socket to try first for the same server (lib/cli/connection.ts). */
  socketPath?: string | undefined;
}

export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

/** kubectl's line for a Status answer: `Error from server (NotFound): pods "x" not found`. */
export function statusLine(status: Partial<Status>, httpCode: number): string {
  const reason = status.reason || (httpCode >= 500 ? 'InternalError' : 'BadRequest');
  return `Error from server (${reason}): ${status.message ?? `an error on the server (HTTP ${httpCode})`}`;
}

/** A response body: a stream of Buffers (`for await`, `destroy()`), or read whole. */
export type ResponseBody = IncomingMessage & { text(): Promise<string>; json(): Promise<unknown> };

export interface ApiResponse {
  statusCode: number;
  body: ResponseBody;
}

// As long as undici's defaults, which this client used before: a connection must open within 5 s,
// and an answer may be silent for at most 300 s between two chunks (unless bodyTimeout says otherwise).
const CONNECT_TIMEOUT_MS = 5000;
const IDLE_TIMEOUT_MS = 300_000;

/**
 * A thin HTTP client for Outpost's API that turns Status answers and refused connections into
 * CliErrors. node:http and node:https, not undici: a command compiles the client with the rest of
 * its modules at every start, and undici is 520 KiB of it (docs/performance.md).
 */
export class ApiClient {
  readonly #server: URL;
  readonly #headers: Record<string, string>;
  readonly #tls: NonNullable<ClientOptions['tls']>;
  #transport: Promise<{ agent: HttpAgent; request: typeof httpRequest }> | undefined;
  #socketPath: string | undefined;
  #local: HttpAgent | undefined;

  constructor(opts: ClientOptions) {
    this.#server = new URL(opts.server);
    this.#tls = opts.tls ?? {};
    this.#headers = opts.token ? { authorization: `Bearer ${opts.token}` } : {};
    this.#socketPath = opts.socketPath;
  }

  /** node:https (and with it TLS) is loaded only for an https:// server. */
  #connection(): Promise<{ agent: HttpAgent; request: typeof httpRequest }> {
    const tls = this.#tls;
    this.#transport ??=
      this.#server.protocol === 'https:'
        ? import('node:https').then((https) => ({
            agent: new https.Agent({ keepAlive: true, ...tlsOptions(tls) }),
            request: https.request,
          }))
        : Promise.resolve({ agent: new HttpAgent({ keepAlive: true }), request: httpRequest });
    return this.#transport;
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
  ): Promise<ApiResponse> {
    const url = new URL(path, this.#server);
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      for (const item of Array.isArray(v) ? v : v === undefined ? [] : [v]) url.searchParams.append(k, item);
    }
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    let res: IncomingMessage;
    try {
      res = await this.#viaSocket(url, method, payload, opts);
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'ECONNREFUSED') {
        throw new CliError(
          `The connection to the server ${url.host} was refused - did you specify the right host or port?`,
        );
      }
      throw new CliError(`Unable to connect to the server: ${(e as Error).message}`);
    }
    const body = Object.assign(res, {
      text: () => readAll(res),
      json: async () => JSON.parse(await readAll(res)) as unknown,
    });
    const statusCode = res.statusCode ?? 0;
    if (statusCode >= 300) {
      const text = await body.text();
      let status: Partial<Status> = {};
      try {
        status = JSON.parse(text) as Status;
      } catch {
        status = { message: text.trim() || `the server responded with HTTP ${statusCode}` };
      }
      throw new CliError(statusLine(status, statusCode));
    }
    return { statusCode, body };
  }

  /**
   * The request over the local socket when there is one, else (or when nothing listens on it: an
   * agent killed without removing it, a stopped one) over `server`. A refused or missing socket
   * means the request never left, so sending it again elsewhere is safe.
   */
  async #viaSocket(
    url: URL,
    method: string,
    payload: string | undefined,
    opts: { accept?: string; contentType?: string; bodyTimeout?: number },
  ): Promise<IncomingMessage> {
    if (this.#socketPath) {
      this.#local ??= new HttpAgent({ keepAlive: true });
      try {
        return await this.#request(httpRequest, this.#local, url, method, payload, opts, this.#socketPath);
      } catch (e) {
        const code = (e as { code?: string }).code;
        if (code !== 'ECONNREFUSED' && code !== 'ENOENT' && code !== 'EACCES') throw e;
        this.#socketPath = undefined;
      }
    }
    const { agent, request } = await this.#connection();
    return this.#request(request, agent, url, method, payload, opts);
  }

  /** One request; resolves with the response (any status), rejects when the connection fails. */
  #request(
    request: typeof httpRequest,
    agent: HttpAgent,
    url: URL,
    method: string,
    payload: string | undefined,
    opts: { accept?: string; contentType?: string; bodyTimeout?: number },
    socketPath?: string,
  ): Promise<IncomingMessage> {
    return new Promise<IncomingMessage>((resolve, reject) => {
      // Over the socket the request is plain HTTP whatever the server's scheme (nothing to encrypt).
      const target = socketPath ? new URL(`${url.pathname}${url.search}`, `http://${url.host}`) : url;
      const req = request(target, {
        method,
        agent,
        ...(socketPath ? { socketPath } : {}),
        headers: {
          ...this.#headers,
          accept: opts.accept ?? 'application/json',
          ...(payload === undefined
            ? {}
            : {
                'content-type': opts.contentType ?? 'application/json',
                'content-length': Buffer.byteLength(payload),
              }),
        },
      });
      const connect = setTimeout(
        () => req.destroy(Object.assign(new Error('Connect Timeout Error'), { code: 'ETIMEDOUT' })),
        CONNECT_TIMEOUT_MS,
      );
      req.once('socket', (socket) => {
        const connected = () => clearTimeout(connect);
        if (socket.connecting)
          socket.once(https(url) && !socketPath ? 'secureConnect' : 'connect', connected);
        else connected();
      });
      const idle = opts.bodyTimeout ?? IDLE_TIMEOUT_MS;
      if (idle > 0)
        req.setTimeout(idle, () =>
          req.destroy(Object.assign(new Error('the server went silent'), { code: 'ETIMEDOUT' })),
        );
      req.once('error', (e) => {
        clearTimeout(connect);
        reject(e);
      });
      req.once('response', resolve);
      req.end(payload);
    });
  }

  async json<T>(path: string, opts: Parameters<ApiClient['send']>[2] = {}): Promise<T> {
    const res = await this.send('GET', path, opts);
    return (await res.body.json()) as T;
  }

  async close(): Promise<void> {
    this.#local?.destroy();
    if (this.#transport) (await this.#transport).agent.destroy();
  }
}

const https = (url: URL) => url.protocol === 'https:';

/** The whole body as text; rejects when the connection breaks before its end. */
async function readAll(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
