// One HTTP/2 connection to the API server for every request and watch of the node (issue 22: all
// watches on one connection, like kubelet). Node's own http2 client: undici's HTTP/2 holds back a
// non-idempotent request (the Lease PUT) while any stream is open, and a watch always is.
import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  connect,
  constants,
  type IncomingHttpHeaders,
  type SecureClientSessionOptions,
} from 'node:http2';
import type { Readable } from 'node:stream';

/** A response whose body is the HTTP/2 stream, with helpers to read it whole. */
export interface H2Response {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Readable & { text(): Promise<string>; json(): Promise<unknown>; dump(): Promise<void> };
}

export interface H2Request {
  method: string;
  /** Path and query. */
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Until the response headers; the body has its own deadline in text(). */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** No answer: the connection failed, broke, or the server did not answer in time. */
export class H2Failure extends Error {
  override name = 'H2Failure';
}

const readAll = (stream: ClientHttp2Stream, timeoutMs: number): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      stream.close(constants.NGHTTP2_CANCEL);
      reject(new H2Failure(`no complete body within ${timeoutMs} ms`));
    }, timeoutMs);
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.once('end', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    stream.once('error', (e) => {
      clearTimeout(timer);
      reject(new H2Failure(e.message));
    });
    stream.once('close', () => {
      clearTimeout(timer);
      if (!stream.readableEnded) reject(new H2Failure('stream closed before its end'));
    });
  });

/** An HTTP/2 client for one origin: one session, opened on demand, replaced when it fails. */
export class H2Client {
  private session: ClientHttp2Session | undefined;

  constructor(
    private readonly origin: string,
    private readonly tls: SecureClientSessionOptions,
  ) {}

  private current(): ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session;
    const s = connect(this.origin, { ...this.tls, peerMaxConcurrentStreams: 1000 });
    s.on('error', () => {}); // surfaced on the streams; the session is dropped on close
    s.on('goaway', () => {
      if (this.session === s) this.session = undefined;
    });
    s.on('close', () => {
      if (this.session === s) this.session = undefined;
    });
    s.unref(); // an idle connection does not keep the process alive
    this.session = s;
    return s;
  }

  /** Sends a request; resolves at the response headers (any status), rejects with H2Failure. */
  request(r: H2Request): Promise<H2Response> {
    return new Promise((resolve, reject) => {
      if (r.signal?.aborted) return reject(r.signal.reason);
      let stream: ClientHttp2Stream;
      try {
        stream = this.current().request(
          { ':method': r.method, ':path': r.path, ...r.headers },
          { endStream: r.body === undefined },
        );
      } catch (e) {
        this.drop();
        return reject(new H2Failure((e as Error).message));
      }
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        stream.close(constants.NGHTTP2_CANCEL);
        reject(err);
      };
      const timer = setTimeout(() => fail(new H2Failure(`no answer within ${r.timeoutMs} ms`)), r.timeoutMs);
      const onAbort = () => {
        stream.close(constants.NGHTTP2_CANCEL);
        if (!settled) fail(r.signal?.reason ?? new Error('aborted'));
      };
      r.signal?.addEventListener('abort', onAbort, { once: true });
      stream.once('close', () => r.signal?.removeEventListener('abort', onAbort));
      stream.once('error', (e) => fail(new H2Failure(e.message)));
      stream.once('response', (headers) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const body = stream as unknown as H2Response['body'];
        body.text = () => readAll(stream, r.timeoutMs);
        body.json = async () => JSON.parse(await readAll(stream, r.timeoutMs));
        body.dump = async () => {
          stream.close(constants.NGHTTP2_CANCEL);
        };
        resolve({ statusCode: Number(headers[':status']), headers, body });
      });
      if (r.body !== undefined) stream.end(r.body);
    });
  }

  /** Drops the connection at once: every open stream fails (a link declared offline). */
  drop(): void {
    const s = this.session;
    this.session = undefined;
    s?.destroy();
  }

  /** Lets open streams finish, then closes. */
  close(): Promise<void> {
    const s = this.session;
    this.session = undefined;
    if (!s || s.closed) return Promise.resolve();
    return new Promise((resolve) => s.close(() => resolve()));
  }
}
