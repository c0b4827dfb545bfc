// Headers, Request and Response of Outpost's own, for `outpost serve` on Node. Node's own fetch
// classes are undici's, and touching any of them loads all of undici and compiles its llhttp
// WebAssembly: +5.7 MB of RSS in a process that has loaded the agent's other built-ins, 13 ms of
// start (27 ms under the unit's V8 flags; docs/performance.md). Hono builds `new Headers()` and
// `new Response()` for its answers and @hono/node-server extends `Request` and `Response` as it
// loads, so the serve script installs these as the globals before either loads
// (lib/http/fetch-globals.ts). They keep the Fetch standard's behaviour for what an HTTP server
// does with them: headers (names checked and folded, values checked and trimmed, iteration sorted,
// `Set-Cookie` apart), bodies from strings, bytes, blobs, URLSearchParams and web streams, read
// once (text, json, arrayBuffer, bytes, blob, formData of a URL-encoded form), cloned by teeing,
// and the constructors' errors. What they leave out (multipart forms, `fetch` itself) falls back to
// Node's own classes, loaded then. Deno and Bun keep their native classes.

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_VALUE = /[\0\r\n]/;
const HTTP_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

const headerName = (name: unknown): string => {
  const s = String(name);
  if (!TOKEN.test(s)) throw new TypeError(`Headers: invalid header name ${JSON.stringify(s)}`);
  return s.toLowerCase();
};

const headerValue = (name: string, value: unknown): string => {
  const s = String(value).replace(HTTP_WHITESPACE, '');
  if (BAD_VALUE.test(s)) throw new TypeError(`Headers: invalid value for header ${JSON.stringify(name)}`);
  return s;
};

type HeadersInit = Iterable<Iterable<unknown>> | Record<string, unknown>;

/** A header list: case-insensitive names, values in the order added, iterated sorted by name. */
export class LightHeaders {
  readonly #map = new Map<string, string[]>();

  constructor(init?: HeadersInit | null) {
    if (init == null) return;
    if (typeof init !== 'object' && typeof init !== 'function')
      throw new TypeError('Headers: init must be an object, an array of pairs or a Headers');
    if (#map in init) {
      for (const [name, values] of (init as LightHeaders).#map) this.#map.set(name, values.slice());
    } else if (Symbol.iterator in init) {
      for (const pair of init as Iterable<Iterable<unknown>>) {
        const p = [...pair];
        if (p.length !== 2) throw new TypeError(`Headers: a header pair has ${p.length} items, not 2`);
        this.append(p[0] as string, p[1] as string);
      }
    } else {
      for (const name of Object.keys(init)) this.append(name, (init as Record<string, unknown>)[name]);
    }
  }

  append(name: string, value: unknown): void {
    const key = headerName(name);
    const v = headerValue(key, value);
    const values = this.#map.get(key);
    if (values) values.push(v);
    else this.#map.set(key, [v]);
  }

  set(name: string, value: unknown): void {
    const key = headerName(name);
    this.#map.set(key, [headerValue(key, value)]);
  }

  delete(name: string): void {
    this.#map.delete(headerName(name));
  }

  get(name: string): string | null {
    const values = this.#map.get(headerName(name));
    return values ? values.join(', ') : null;
  }

  has(name: string): boolean {
    return this.#map.has(headerName(name));
  }

  getSetCookie(): string[] {
    return this.#map.get('set-cookie')?.slice() ?? [];
  }

  /** The sorted list the iterators walk: one pair per name, each `Set-Cookie` on its own. */
  #pairs(): [string, string][] {
    const pairs: [string, string][] = [];
    for (const name of [...this.#map.keys()].sort()) {
      const values = this.#map.get(name)!;
      if (name === 'set-cookie') for (const v of values) pairs.push([name, v]);
      else pairs.push([name, values.join(', ')]);
    }
    return pairs;
  }

  forEach(callback: (value: string, name: string, headers: this) => void, thisArg?: unknown): void {
    for (const [name, value] of this.#pairs()) callback.call(thisArg, value, name, this);
  }

  entries(): IterableIterator<[string, string]> {
    return this.#pairs()[Symbol.iterator]();
  }

  keys(): IterableIterator<string> {
    return this.#pairs()
      .map((p) => p[0])
      [Symbol.iterator]();
  }

  values(): IterableIterator<string> {
    return this.#pairs()
      .map((p) => p[1])
      [Symbol.iterator]();
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return 'Headers';
  }
}

type Source = string | Uint8Array | ReadableStream<Uint8Array | string> | null;

/** A body and the content type it implies (the Fetch standard's "extract a body"). */
function extract(body: unknown): { source: Source; type: string | null } {
  if (body == null) return { source: null, type: null };
  if (typeof body === 'string') return { source: body, type: 'text/plain;charset=UTF-8' };
  // Bytes are taken as they are, not copied: a server hands over what it will not touch again.
  if (body instanceof Uint8Array) return { source: body, type: null };
  if (body instanceof ArrayBuffer) return { source: new Uint8Array(body), type: null };
  if (ArrayBuffer.isView(body))
    return { source: new Uint8Array(body.buffer, body.byteOffset, body.byteLength), type: null };
  if (body instanceof URLSearchParams)
    return { source: body.toString(), type: 'application/x-www-form-urlencoded;charset=UTF-8' };
  if (body instanceof Blob) return { source: body.stream(), type: body.type || null };
  if (typeof (body as ReadableStream).getReader === 'function')
    return { source: body as ReadableStream<Uint8Array>, type: null };
  if (Object.prototype.toString.call(body) === '[object FormData]')
    throw new TypeError('outpost serve does not send FormData bodies');
  return { source: String(body), type: 'text/plain;charset=UTF-8' };
}

const unusable = () => new TypeError('Body is unusable: it has already been read');

/** The body half of Request and Response: read once, by any of the reading methods. */
abstract class LightBody {
  #source: Source = null;
  #stream: ReadableStream<Uint8Array | string> | undefined;
  #used = false;

  protected abstract readonly contentType: string | null;

  protected setBody(source: Source): void {
    this.#source = source;
  }

  /** The body as a stream (made from the bytes on first use), or null for no body. */
  get body(): ReadableStream<Uint8Array | string> | null {
    if (this.#source === null) return null;
    if (!this.#stream) {
      const s = this.#source;
      if (typeof s === 'string' || s instanceof Uint8Array) {
        const bytes = typeof s === 'string' ? encoder.encode(s) : s;
        this.#stream = new ReadableStream<Uint8Array>({
          start(controller) {
            if (bytes.byteLength > 0) controller.enqueue(bytes);
            controller.close();
          },
        });
      } else this.#stream = s;
    }
    return this.#stream;
  }

  get bodyUsed(): boolean {
    return this.#used || (this.#stream?.locked ?? false);
  }

  /** Marks the body read and hands over what it holds. */
  #take(): Source {
    if (this.#source === null) return null; // no body: read as empty, as often as asked
    if (this.bodyUsed) throw unusable();
    this.#used = true;
    return this.#stream ?? this.#source;
  }

  async #bytes(): Promise<Uint8Array> {
    const s = this.#take();
    if (s === null) return new Uint8Array(0);
    if (typeof s === 'string') return encoder.encode(s);
    if (s instanceof Uint8Array) return s;
    const reader = s.getReader();
    const chunks: Uint8Array[] = [];
    let length = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const chunk = typeof value === 'string' ? encoder.encode(value) : value;
      chunks.push(chunk);
      length += chunk.byteLength;
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
  }

  async text(): Promise<string> {
    if (typeof this.#source === 'string' && !this.#stream && !this.#used) {
      this.#used = true;
      return this.#source;
    }
    return decoder.decode(await this.#bytes());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const b = await this.#bytes();
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  }

  async bytes(): Promise<Uint8Array> {
    return (await this.#bytes()).slice();
  }

  async blob(): Promise<Blob> {
    return new Blob([await this.#bytes()], { type: this.contentType ?? '' });
  }

  /**
   * A URL-encoded form's fields (URLSearchParams has FormData's reading methods: get, getAll,
   * has, forEach, entries); any other form (multipart) is read by Node's own Response.
   */
  async formData(): Promise<FormData> {
    const type = (this.contentType ?? '').split(';')[0]!.trim().toLowerCase();
    if (type === 'application/x-www-form-urlencoded')
      return new URLSearchParams(await this.text()) as unknown as FormData;
    const NodeResponse = nodeClass('Response') as typeof Response;
    const bytes = await this.#bytes();
    return new NodeResponse(bytes, { headers: { 'content-type': this.contentType ?? '' } }).formData();
  }

  /** A second body reading the same bytes (a stream is teed: this one keeps one branch). */
  protected cloneSource(): Source {
    if (this.bodyUsed) throw new TypeError('clone: the body has already been read');
    const s = this.#stream ?? this.#source;
    if (s === null || typeof s === 'string' || s instanceof Uint8Array) return s;
    const [mine, theirs] = s.tee();
    this.#stream = mine;
    return theirs;
  }
}

const NORMALIZED = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT']);
const FORBIDDEN_METHOD = new Set(['CONNECT', 'TRACE', 'TRACK']);

export interface LightRequestInit {
  method?: string;
  headers?: HeadersInit | LightHeaders | null;
  body?: unknown;
  signal?: AbortSignal | null;
  duplex?: 'half';
  redirect?: string;
  credentials?: string;
  mode?: string;
  cache?: string;
  referrer?: string;
  referrerPolicy?: string;
  integrity?: string;
  keepalive?: boolean;
}

const OPTIONS = [
  'redirect',
  'credentials',
  'mode',
  'cache',
  'referrer',
  'referrerPolicy',
  'integrity',
] as const;
const OPTION_DEFAULTS: Record<(typeof OPTIONS)[number], string> = {
  redirect: 'follow',
  credentials: 'same-origin',
  mode: 'cors',
  cache: 'default',
  referrer: 'about:client',
  referrerPolicy: '',
  integrity: '',
};

/** An HTTP request: an absolute URL, a method, headers, a body read once, an abort signal. */
export class LightRequest extends LightBody {
  readonly #url: string;
  readonly #method: string;
  readonly #headers: LightHeaders;
  readonly #signal: AbortSignal;
  readonly #options: Record<(typeof OPTIONS)[number], string>;
  readonly #keepalive: boolean;

  constructor(input: string | URL | LightRequest, init: LightRequestInit = {}) {
    super();
    // A request of this class (a lightweight one of @hono/node-server's is materialized by its
    // own constructor first); anything else is a URL.
    const from = typeof input === 'object' && #url in input ? (input as LightRequest) : undefined;
    const base = from && {
      method: from.#method,
      headers: from.#headers,
      signal: from.#signal,
      options: from.#options,
      keepalive: from.#keepalive,
    };
    let url: string;
    if (from) url = from.#url;
    else {
      let parsed: URL;
      try {
        parsed = new URL(String(input));
      } catch {
        throw new TypeError(
          `Request: cannot parse URL ${JSON.stringify(String(input))} (it must be absolute)`,
        );
      }
      if (parsed.username || parsed.password)
        throw new TypeError('Request: a URL with credentials cannot make a request');
      url = parsed.href;
    }
    let method = init.method ?? base?.method ?? 'GET';
    if (init.method !== undefined) {
      if (!TOKEN.test(method))
        throw new TypeError(`Request: ${JSON.stringify(method)} is not a valid HTTP method`);
      const upper = method.toUpperCase();
      if (FORBIDDEN_METHOD.has(upper)) throw new TypeError(`Request: the ${method} method is not allowed`);
      if (NORMALIZED.has(upper)) method = upper;
    }
    const headers = new LightHeaders(init.headers ?? base?.headers);
    let source: Source = null;
    let type: string | null = null;
    if (init.body != null) ({ source, type } = extract(init.body));
    else if (init.body === undefined && from?.body) {
      if (from.bodyUsed) throw new TypeError('Request: the input request’s body has already been read');
      source = from.body;
      from.#transferred = true;
    }
    if (source !== null && (method === 'GET' || method === 'HEAD'))
      throw new TypeError(`Request: a ${method} request cannot have a body`);
    if (type && !headers.has('content-type')) headers.set('content-type', type);
    this.#url = url;
    this.#method = method;
    this.#headers = headers;
    this.#signal = init.signal ?? base?.signal ?? new AbortController().signal;
    this.#options = { ...OPTION_DEFAULTS };
    for (const k of OPTIONS) {
      const v = init[k] ?? base?.options[k];
      if (v !== undefined) this.#options[k] = v;
    }
    this.#keepalive = init.keepalive ?? base?.keepalive ?? false;
    this.setBody(source);
  }

  /** Set once another request took this one's body: it reads as used. */
  #transferred = false;

  override get bodyUsed(): boolean {
    return this.#transferred || super.bodyUsed;
  }

  protected get contentType(): string | null {
    return this.#headers.get('content-type');
  }

  get url(): string {
    return this.#url;
  }
  get method(): string {
    return this.#method;
  }
  get headers(): LightHeaders {
    return this.#headers;
  }
  get signal(): AbortSignal {
    return this.#signal;
  }
  get redirect(): string {
    return this.#options.redirect;
  }
  get credentials(): string {
    return this.#options.credentials;
  }
  get mode(): string {
    return this.#options.mode;
  }
  get cache(): string {
    return this.#options.cache;
  }
  get referrer(): string {
    return this.#options.referrer;
  }
  get referrerPolicy(): string {
    return this.#options.referrerPolicy;
  }
  get integrity(): string {
    return this.#options.integrity;
  }
  get keepalive(): boolean {
    return this.#keepalive;
  }
  get destination(): string {
    return '';
  }
  get duplex(): 'half' {
    return 'half';
  }

  clone(): LightRequest {
    const copy = new LightRequest(this.#url, {
      method: this.#method,
      headers: this.#headers,
      signal: this.#signal,
      ...this.#options,
      keepalive: this.#keepalive,
    });
    copy.setBody(this.cloneSource());
    return copy;
  }

  get [Symbol.toStringTag](): string {
    return 'Request';
  }
}

export interface LightResponseInit {
  status?: number;
  statusText?: string;
  headers?: HeadersInit | LightHeaders | null;
}

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);
const REASON_PHRASE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** An HTTP response: a status, a reason phrase, headers and a body read once. */
export class LightResponse extends LightBody {
  #status = 200;
  #statusText = '';
  #headers: LightHeaders;
  #type = 'default';

  constructor(body?: unknown, init: LightResponseInit = {}) {
    super();
    const status = init.status ?? 200;
    if (!Number.isInteger(status) || status < 200 || status > 599)
      throw new RangeError(`Response: status ${status} is not in the range 200 to 599`);
    const statusText = init.statusText ?? '';
    if (!REASON_PHRASE.test(statusText)) throw new TypeError('Response: invalid status text');
    this.#status = status;
    this.#statusText = statusText;
    this.#headers = new LightHeaders(init.headers);
    if (body != null) {
      if (NULL_BODY_STATUS.has(status))
        throw new TypeError(`Response: a ${status} response cannot have a body`);
      const { source, type } = extract(body);
      if (type && !this.#headers.has('content-type')) this.#headers.set('content-type', type);
      this.setBody(source);
    }
  }

  static error(): LightResponse {
    const r = new LightResponse(null);
    r.#status = 0;
    r.#type = 'error';
    return r;
  }

  static redirect(url: string | URL, status = 302): LightResponse {
    if (!REDIRECT_STATUS.has(status))
      throw new RangeError(`Response.redirect: ${status} is not a redirect status`);
    let location: string;
    try {
      location = new URL(String(url)).href;
    } catch {
      throw new TypeError(`Response.redirect: cannot parse URL ${JSON.stringify(String(url))}`);
    }
    return new LightResponse(null, { status, headers: { location } });
  }

  static json(data: unknown, init: LightResponseInit = {}): LightResponse {
    const text = JSON.stringify(data);
    if (text === undefined) throw new TypeError('Response.json: the data is not JSON serializable');
    const headers = new LightHeaders(init.headers);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    return new LightResponse(text, { ...init, headers });
  }

  protected get contentType(): string | null {
    return this.#headers.get('content-type');
  }

  get status(): number {
    return this.#status;
  }
  get ok(): boolean {
    return this.#status >= 200 && this.#status < 300;
  }
  get statusText(): string {
    return this.#statusText;
  }
  get headers(): LightHeaders {
    return this.#headers;
  }
  get type(): string {
    return this.#type;
  }
  get url(): string {
    return '';
  }
  get redirected(): boolean {
    return false;
  }

  clone(): LightResponse {
    const copy = new LightResponse(null, {
      status: this.#status === 0 ? 200 : this.#status,
      statusText: this.#statusText,
      headers: this.#headers,
    });
    copy.#status = this.#status;
    copy.#type = this.#type;
    copy.setBody(this.cloneSource());
    return copy;
  }

  get [Symbol.toStringTag](): string {
    return 'Response';
  }
}

/** Node's own classes, kept when the light ones are installed, for what the light ones leave out. */
const nodeGetters = new Map<string, () => unknown>();
const nodeClasses = new Map<string, unknown>();

/**
 * Node's own `Request`, `Response` or `Headers` (undici's), loaded on this first use. Node's lazy
 * global would put itself back on globalThis as it loads, so the global in place (the light class,
 * or what a library put over it) is restored around it.
 */
export function nodeClass(name: 'Headers' | 'Request' | 'Response'): unknown {
  const known = nodeClasses.get(name);
  if (known) return known;
  const getter = nodeGetters.get(name);
  if (!getter) return (globalThis as Record<string, unknown>)[name];
  const current = Object.getOwnPropertyDescriptor(globalThis, name)!;
  const cls = getter.call(globalThis);
  Object.defineProperty(globalThis, name, current);
  nodeClasses.set(name, cls);
  return cls;
}

/**
 * Puts the light classes in place of Node's `Headers`, `Request` and `Response` globals, as long as
 * Node has not loaded its own yet (then nothing would be saved, and objects of both kinds would
 * meet). Returns whether it did.
 */
export function installFetchClasses(): boolean {
  const light = { Headers: LightHeaders, Request: LightRequest, Response: LightResponse };
  const descriptors = Object.keys(light).map(
    (name) => [name, Object.getOwnPropertyDescriptor(globalThis, name)] as const,
  );
  // Node's lazy globals are accessors until first read; Deno's and Bun's are plain values.
  if (!descriptors.every(([, d]) => d?.get)) return false;
  for (const [name, d] of descriptors) {
    nodeGetters.set(name, d!.get!);
    Object.defineProperty(globalThis, name, {
      value: light[name as keyof typeof light],
      writable: true,
      configurable: true,
      enumerable: d!.enumerable ?? false,
    });
  }
  return true;
}
