// kubelet's httpGet probe: GET with `kube-probe/1.x` and `Accept: */*` unless the probe's headers
// say otherwise, no keep-alive, TLS unverified, 200 <= status < 400 healthy. Redirects are followed
// on the same host only; one to another host ends the probe as a success with a warning.
import type { IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { KUBE_MINOR } from '#lib/version.ts';
import type { Deadline, K8sProbe, ProbeOutcome } from './types.ts';
import { cancelled, dialFailure, joinHostPort, MAX_OUTPUT } from './types.ts';

type HTTPGetAction = NonNullable<K8sProbe['httpGet']>;
type Headers = Record<string, string[]>;

const MAX_REDIRECTS = 10; // Go's http.Client default
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Runs an httpGet probe against `host:port`; `d` bounds the whole exchange, redirects included. */
export async function httpGetProbe(
  action: HTTPGetAction,
  host: string,
  port: number,
  d: Deadline,
): Promise<ProbeOutcome> {
  if (!host) return { result: 'unknown', output: 'no pod IP to probe' };
  const scheme = (action.scheme || 'HTTP').toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') {
    return { result: 'unknown', output: `unsupported protocol scheme "${scheme}"` };
  }
  const first = probeUrl(scheme, host, port, action.path ?? '');
  const headers = probeHeaders(action.httpHeaders ?? []);
  let url = first;
  for (let redirects = 0; ; redirects++) {
    let res: Response;
    try {
      res = await get(url, headers, d);
    } catch (err) {
      if (d.signal.aborted && !d.timedOut()) return cancelled;
      return { result: 'failure', output: `Get "${url.href}": ${describe(err as Error, url, d)}` };
    }
    const location = REDIRECTS.has(res.status) ? res.location : undefined;
    if (location !== undefined) {
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        return {
          result: 'failure',
          output: `Get "${url.href}": failed to parse Location header "${location}"`,
        };
      }
      if (next.hostname === first.hostname) {
        if (redirects + 1 >= MAX_REDIRECTS) {
          return {
            result: 'failure',
            output: `Get "${next.href}": stopped after ${MAX_REDIRECTS} redirects`,
          };
        }
        // Go keeps a custom Host header through a relative redirect only.
        if (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(location)) delete headers.host;
        url = next;
        continue;
      }
    }
    return classify(res);
  }
}

function classify(res: Response): ProbeOutcome {
  if (res.status >= 200 && res.status < 400) {
    if (res.status >= 300) {
      return {
        result: 'success',
        warning: true,
        output: `Probe terminated redirects, Response body: ${res.body}`,
      };
    }
    return { result: 'success', output: res.body };
  }
  // kubelet keeps the body out of the failure message (kubernetes#99425).
  return { result: 'failure', output: `HTTP probe failed with statuscode: ${res.status}` };
}

/** kubelet's formatURL: the probe path (query included) on scheme://host:port. */
function probeUrl(scheme: string, host: string, port: number, path: string): URL {
  const url = new URL(`${scheme}://${joinHostPort(host, port)}`);
  const noFragment = path.split('#')[0] ?? '';
  const q = noFragment.indexOf('?');
  url.pathname = q < 0 ? noFragment : noFragment.slice(0, q);
  if (q >= 0) url.search = noFragment.slice(q);
  return url;
}

function probeHeaders(list: { name: string; value: string }[]): Headers {
  const h: Headers = {};
  for (const { name, value } of list) {
    const key = name.toLowerCase();
    h[key] = [...(h[key] ?? []), value];
  }
  h['user-agent'] ??= [`kube-probe/1.${KUBE_MINOR}`];
  // An Accept header set to "" removes it, as in kubelet.
  if (!h.accept) h.accept = ['*/*'];
  else if (h.accept[0] === '') delete h.accept;
  return h;
}

interface Response {
  status: number;
  location: string | undefined;
  body: string;
}

class BodyError extends Error {}

function get(url: URL, headers: Headers, d: Deadline): Promise<Response> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request({
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port,
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      // Go sends the first Host value as the request's Host, the others not at all.
      headers: { ...headers, ...(headers.host && { host: headers.host[0] }), connection: 'close' },
      agent: false,
      rejectUnauthorized: false,
      signal: d.signal,
    });
    let responded = false;
    req.once('error', (err) => reject(responded ? new BodyError(err.message) : err));
    req.once('response', (res: IncomingMessage) => {
      responded = true;
      const chunks: Buffer[] = [];
      let size = 0;
      let finished = false;
      const done = () => {
        if (finished) return;
        finished = true;
        res.destroy();
        const body = Buffer.concat(chunks).subarray(0, MAX_OUTPUT).toString('utf8');
        resolve({ status: res.statusCode ?? 0, location: res.headers.location, body });
      };
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= MAX_OUTPUT) done(); // kubelet reads at most 10 KiB and carries on
      });
      res.once('end', done);
      res.once('error', (err) => reject(new BodyError(err.message)));
      res.once('close', () => {
        if (!finished && !res.complete) reject(new BodyError('unexpected EOF'));
      });
    });
    req.end();
  });
}

/** Words a failed exchange as Go's http.Client does after `Get "<url>": `. */
function describe(err: Error, url: URL, d: Deadline): string {
  if (d.timedOut()) {
    return err instanceof BodyError
      ? 'context deadline exceeded (Client.Timeout or context cancellation while reading body)'
      : 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)';
  }
  if (err instanceof BodyError) return err.message;
  const code = (err as NodeJS.ErrnoException).code ?? '';
  // Node's "socket hang up": the server closed the connection without an answer.
  if (code === 'ECONNRESET') return 'EOF';
  if (code.startsWith('ERR_SSL') || code === 'EPROTO') return `tls: ${err.message}`;
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  return dialFailure(err, url.hostname.replace(/^\[|\]$/g, ''), port);
}
