import type { Pod } from '#lib/kube/types.ts';
import { parseRfc3339 } from '#lib/pods/logs/format.ts';
import { DEFAULT_CONTAINER } from '#lib/pods/logs/locate.ts';
import { type ApiClient, CliError, usageError } from './client.ts';
import { runClient } from './commands.ts';
import type { ConnectionFlags } from './connection.ts';

/** Where `logs` writes: raw bytes out (awaited, for backpressure), messages to stderr. */
export interface LogIo {
  out: (bytes: Uint8Array) => Promise<void>;
  err: (text: string) => void;
}

export interface LogsOptions {
  namespace: string;
  container?: string | undefined;
  follow: boolean;
  previous: boolean;
  tail: number;
  since?: string | undefined;
  sinceTime?: string | undefined;
  timestamps: boolean;
  limitBytes?: number | undefined;
  allContainers: boolean;
}

// kubectl follows at most this many containers at once (--max-log-requests).
const MAX_FOLLOW = 5;

const UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1e3,
  m: 6e4,
  h: 3.6e6,
};

/** Go's time.ParseDuration, in milliseconds, with Go's error messages (what kubectl's `--since` takes). */
export function parseGoDuration(text: string): number {
  const invalid = () => usageError(`time: invalid duration "${text}"`);
  let s = text;
  const sign = s.startsWith('-') ? -1 : 1;
  if (s.startsWith('-') || s.startsWith('+')) s = s.slice(1);
  if (s === '0') return 0;
  if (s === '') throw invalid();
  let ms = 0;
  for (const m of s.matchAll(/(\d*(?:\.\d*)?)([^\d.]*)/g)) {
    if (m[0] === '') continue;
    const [, num = '', unit = ''] = m;
    if (num === '' || num === '.') throw invalid();
    if (unit === '') throw usageError(`time: missing unit in duration "${text}"`);
    const f = UNITS[unit];
    if (f === undefined) throw usageError(`time: unknown unit "${unit}" in duration "${text}"`);
    ms += Number(num) * f;
  }
  return sign * ms;
}

/** kubectl's choice of containers: -c, else the default-container annotation, else the first (with a notice). */
function pickContainers(pod: Pod, o: LogsOptions, io: LogIo): string[] {
  const name = pod.metadata.name ?? '';
  const init = (pod.spec.initContainers ?? []).map((c) => c.name);
  const app = pod.spec.containers.map((c) => c.name);
  if (o.allContainers) return [...init, ...app];
  const exists = (c: string) => init.includes(c) || app.includes(c);
  let container = o.container;
  const annotated = pod.metadata.annotations?.[DEFAULT_CONTAINER];
  if (!container && annotated) {
    if (exists(annotated)) container = annotated;
    else io.err(`Default container name "${annotated}" not found in pod ${name}\n`);
  }
  if (!container) {
    container = app[0];
    if (!container)
      throw new CliError(`error: pod ${pod.metadata.namespace}/${name} does not have any containers`);
    if (app.length > 1 || init.length > 0)
      io.err(
        `Defaulted container "${container}" out of: ${[...app, ...init.map((c) => `${c} (init)`)].join(', ')}\n`,
      );
  }
  if (!exists(container)) throw new CliError(`error: container ${container} is not valid for pod ${name}`);
  return [container];
}

/** The log query kubectl sends for these flags, after kubectl's own checks. */
function logQuery(o: LogsOptions): Record<string, string | undefined> {
  if (o.since && o.sinceTime)
    throw usageError('error: at most one of `sinceTime` or `sinceSeconds` may be specified');
  if (o.tail < -1) throw usageError('error: --tail must be greater than or equal to -1');
  if (o.limitBytes !== undefined && o.limitBytes < 1)
    throw usageError('error: --limit-bytes must be greater than 0');
  let sinceSeconds: string | undefined;
  if (o.since) {
    let ms: number;
    try {
      ms = parseGoDuration(o.since);
    } catch (e) {
      throw usageError(`error: invalid argument "${o.since}" for "--since" flag: ${(e as Error).message}`);
    }
    if (ms < 0) throw usageError('error: --since must be greater than 0');
    if (ms > 0) sinceSeconds = String(Math.round(ms / 1000)); // kubectl rounds to the nearest second
  }
  if (o.sinceTime !== undefined && parseRfc3339(o.sinceTime) === undefined)
    throw new CliError(
      `error: parsing time "${o.sinceTime}" as "2006-01-02T15:04:05Z07:00": not an RFC 3339 time`,
    );
  return {
    follow: o.follow ? 'true' : undefined,
    previous: o.previous ? 'true' : undefined,
    timestamps: o.timestamps ? 'true' : undefined,
    sinceSeconds,
    sinceTime: o.sinceTime,
    tailLines: o.tail >= 0 ? String(o.tail) : undefined,
    limitBytes: o.limitBytes === undefined ? undefined : String(o.limitBytes),
  };
}

/**
 * `outpost logs POD [CONTAINER]`: what `kubectl logs` prints, streamed as it arrives; with
 * `--all-containers` each container in turn (all at once when following), without prefixes.
 */
export async function logs(
  client: ApiClient,
  target: string,
  positional: string | undefined,
  o: LogsOptions,
  io: LogIo,
): Promise<number> {
  const [kind, podName] = target.includes('/') ? target.split('/', 2) : ['pod', target];
  if (!['pod', 'pods', 'po'].includes(kind!.toLowerCase()) || !podName)
    throw usageError(`error: cannot get the logs of "${target}": only pods have logs on an Outpost node`);
  if (positional && o.container && positional !== o.container)
    throw usageError('error: only one of -c or an inline [CONTAINER] arg is allowed');
  const opts = { ...o, container: o.container ?? positional };
  if (opts.allContainers && opts.container)
    throw usageError(
      `error: --all-containers=true should not be specified with container name ${opts.container}`,
    );
  const query = logQuery(opts);
  const base = `/api/v1/namespaces/${encodeURIComponent(o.namespace)}/pods/${encodeURIComponent(podName)}`;
  let pod: Pod;
  try {
    pod = await client.json<Pod>(base);
  } catch (e) {
    // kubectl finds the pod through its resource builder, which words a missing pod its own way.
    if (e instanceof CliError && e.message.startsWith('Error from server (NotFound)'))
      throw new CliError(
        `error: error from server (NotFound): pods "${podName}" not found in namespace "${o.namespace}"`,
      );
    throw e;
  }
  const containers = pickContainers(pod, opts, io);
  const open = (container: string) =>
    client.send('GET', `${base}/log`, {
      accept: 'text/plain, */*',
      query: { container, ...query },
      bodyTimeout: 0,
    });
  if (!opts.follow || containers.length === 1) {
    for (const c of containers) for await (const chunk of (await open(c)).body) await io.out(chunk as Buffer);
    return 0;
  }
  if (containers.length > MAX_FOLLOW)
    throw new CliError(
      `error: you are attempting to follow ${containers.length} log streams, but maximum allowed concurrency is ${MAX_FOLLOW}, use --max-log-requests to increase the limit`,
    );
  // Several followed at once: whole lines only, so that containers never cut into each other's lines.
  // Any failure ends them all, as kubectl does (and open streams would keep the client from closing).
  const opened = await Promise.allSettled(containers.map(open));
  const bodies = opened.flatMap((r) => (r.status === 'fulfilled' ? [r.value.body] : []));
  try {
    for (const r of opened) if (r.status === 'rejected') throw r.reason;
    await Promise.all(
      bodies.map(async (body) => {
        let carry = Buffer.alloc(0);
        for await (const chunk of body) {
          const buf = Buffer.concat([carry, chunk as Buffer]);
          const end = buf.lastIndexOf(10) + 1;
          carry = buf.subarray(end);
          if (end > 0) await io.out(buf.subarray(0, end));
        }
        if (carry.length) await io.out(carry);
      }),
    );
  } finally {
    for (const body of bodies) body.destroy();
  }
  return 0;
}

const stdio: LogIo = {
  out: (bytes) =>
    new Promise((resolve) =>
      process.stdout.write(bytes) ? resolve() : process.stdout.once('drain', resolve),
    ),
  err: (text) => process.stderr.write(text),
};

/** `outpost logs POD [CONTAINER]` with the flags commander parsed (lib/cli/main.ts). */
export function logsCommand(
  pod: string,
  container: string | undefined,
  o: ConnectionFlags & LogsOptions,
): Promise<number> {
  // `outpost logs ... | head` closes stdout early; that is the reader's choice, not an error.
  process.stdout.once('error', () => process.exit(0));
  return runClient(o, (client) => logs(client, pod, container, o, stdio));
}
