import { isStatusError } from '#lib/kube/status.ts';

// containerd's CRI plugin answers a failed PullImage with gRPC UNKNOWN and Go's error chain as
// text (`failed to pull and unpack image ...: failed to resolve reference ...: failed to do request:
// Head "https://host/v2/...": dial tcp host:port: connect: connection refused`). Only that text
// says whether the registry was reached. These are the network-level failures of Go's net and
// net/http packages (DNS, dial, TLS handshake, deadlines), never a registry's answer (404, 401,
// 403), nor a certificate it presented (x509).
const UNREACHABLE: [RegExp, string][] = [
  [/lookup \S+(?: on \S+)?: no such host/, 'no such host'],
  [
    /lookup \S+(?: on \S+)?: (?:server misbehaving|i\/o timeout|Temporary failure in name resolution)/,
    'DNS lookup failed',
  ],
  [/connect: connection refused/, 'connection refused'],
  [/connect: network is unreachable/, 'network is unreachable'],
  [/connect: no route to host/, 'no route to host'],
  [/connect: host is down/, 'host is down'],
  [/read: connection reset by peer/, 'connection reset by peer'],
  [/dial tcp \S+: i\/o timeout/, 'timeout'],
  [/net\/http: TLS handshake timeout/, 'timeout'],
  [/net\/http: timeout awaiting response headers/, 'timeout'],
  [/Client\.Timeout exceeded/, 'timeout'],
];

/** Why the registry was not reached (`connection refused`, `no such host`, `timeout`), or undefined. */
export function unreachableCause(message: string): string | undefined {
  return UNREACHABLE.find(([re]) => re.test(message))?.[1];
}

/**
 * Whether a failed pull means the registry could not be reached (DNS failure, connection refused,
 * timeout), as opposed to an answer from it (not found, unauthorized) or a broken runtime. A pull
 * that ran past its deadline (504 Timeout) counts as unreachable; the runtime itself being down
 * (503) does not.
 */
export function isRegistryUnreachable(err: unknown): boolean {
  if (isStatusError(err)) {
    if (err.code === 504) return true;
    if (err.code === 404 || err.code === 503 || err.code === 401 || err.code === 403) return false;
  }
  const message = err instanceof Error ? err.message : String(err);
  return unreachableCause(message) !== undefined;
}
