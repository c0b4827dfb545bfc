// One container probe, run once, the way kubelet's prober runs it (pkg/probe/{exec,http,tcp,grpc}):
// the result and the output string its events show.
import { connect } from 'node:net';
import type { Clock } from '#lib/clock.ts';
import { systemClock } from '#lib/clock.ts';
import { isGrpcError } from '#lib/grpc/errors.ts';
import { isStatusError } from '#lib/kube/status.ts';
import { grpcProbe } from './grpc.ts';
import { httpGetProbe } from './http.ts';
import {
  type ContainerPort,
  cancelled,
  type Deadline,
  dialFailure,
  type IntOrString,
  joinHostPort,
  type K8sProbe,
  MAX_OUTPUT,
  type Output,
  type ProbeOutcome,
  type ProbeTarget,
} from './types.ts';

export * from './types.ts';

/** Runs `probe` once against `target`, bounded by `timeoutSeconds` (default 1) on `clock`. */
export async function runProbe(
  probe: K8sProbe,
  target: ProbeTarget,
  signal?: AbortSignal,
  clock: Clock = systemClock,
): Promise<ProbeOutcome> {
  const timeoutSeconds = positive(probe.timeoutSeconds, 1);
  const ac = new AbortController();
  let timedOut = false;
  const timer = clock.setTimeout(() => {
    timedOut = true;
    ac.abort();
  }, timeoutSeconds * 1000);
  const cancel = () => ac.abort();
  if (signal?.aborted) ac.abort();
  signal?.addEventListener('abort', cancel);
  const d: Deadline = { signal: ac.signal, timedOut: () => timedOut };
  try {
    if (probe.exec) return await execProbe(probe.exec.command ?? [], target, timeoutSeconds, d);
    // kubelet probes the pod IP; a host-network pod's pod IP is the host IP.
    const podHost = target.podIP || target.hostIP;
    if (probe.httpGet) {
      const port = resolvePort(probe.httpGet.port, target.ports);
      if (typeof port === 'string') return { result: 'unknown', output: port };
      return await httpGetProbe(probe.httpGet, probe.httpGet.host || podHost, port, d);
    }
    if (probe.tcpSocket) {
      const port = resolvePort(probe.tcpSocket.port, target.ports);
      if (typeof port === 'string') return { result: 'unknown', output: port };
      return await tcpProbe(probe.tcpSocket.host || podHost, port, d);
    }
    if (probe.grpc) return await grpcProbe(probe.grpc, podHost, d, timeoutSeconds);
    return { result: 'unknown', output: 'missing probe handler' };
  } catch (err) {
    return { result: 'unknown', output: errorMessage(err) };
  } finally {
    clock.clearTimeout(timer);
    signal?.removeEventListener('abort', cancel);
  }
}

async function execProbe(
  cmd: string[],
  t: ProbeTarget,
  timeoutSeconds: number,
  d: Deadline,
): Promise<ProbeOutcome> {
  const shown = JSON.stringify(cmd.join(' '));
  const timedOut: ProbeOutcome = {
    result: 'failure',
    output: `command timed out: ${shown} timed out after ${timeoutSeconds}s`,
  };
  try {
    const res = await untilAborted(t.exec(t.containerId, cmd, timeoutSeconds), d.signal);
    if (res === ABORTED) return d.timedOut() ? timedOut : cancelled;
    // kubelet joins stdout and stderr (RunInContainer) and shows them as the output.
    const out = Buffer.concat([toBuffer(res.stdout), toBuffer(res.stderr)]).subarray(0, MAX_OUTPUT);
    const output = out.toString('utf8');
    if (res.exitCode === 0) return { result: 'success', output } satisfies ProbeOutcome;
    // An empty output would make the event read "Liveness probe failed: "; say what happened.
    return { result: 'failure', output: output || `command ${shown} exited with ${res.exitCode}` };
  } catch (err) {
    // The runtime enforces ExecSync's timeout itself; a DEADLINE_EXCEEDED is that timeout.
    if ((isStatusError(err) && err.code === 504) || (isGrpcError(err) && err.code === 4)) return timedOut;
    return { result: 'unknown', output: errorMessage(err) } satisfies ProbeOutcome;
  }
}

/** Connects and closes: kubelet's tcpSocket probe. */
function tcpProbe(host: string, port: number, d: Deadline): Promise<ProbeOutcome> {
  // An empty host would make net.connect dial localhost, i.e. the agent's own node.
  if (!host) return Promise.resolve({ result: 'unknown', output: 'no pod IP to probe' });
  const addr = joinHostPort(host, port);
  return new Promise((resolve) => {
    const sock = connect({ host, port });
    const finish = (o: ProbeOutcome) => {
      d.signal.removeEventListener('abort', onAbort);
      resolve(o);
    };
    const onAbort = () => {
      sock.destroy();
      finish(d.timedOut() ? { result: 'failure', output: `dial tcp ${addr}: i/o timeout` } : cancelled);
    };
    d.signal.addEventListener('abort', onAbort);
    sock.once('connect', () => {
      // kubelet's probe dialer lingers 0 s so probes leave no TIME_WAIT behind; a reset does the same.
      sock.resetAndDestroy();
      finish({ result: 'success', output: '' });
    });
    sock.once('error', (err) => finish({ result: 'failure', output: dialFailure(err, host, port) }));
  });
}

/** A probe port by number or by the name of one of the container's ports, or why it cannot be. */
export function resolvePort(port: IntOrString, ports: ContainerPort[] = []): number | string {
  let n = typeof port === 'number' ? port : Number.NaN;
  if (typeof port === 'string') {
    const named = ports.find((p) => p.name === port);
    // kubelet's last resort: a number written as a string.
    n = named ? named.containerPort : /^\d+$/.test(port) ? Number(port) : Number.NaN;
    if (Number.isNaN(n)) return `port "${port}" not found among the container's ports`;
  }
  return Number.isInteger(n) && n > 0 && n < 65536 ? n : `invalid port number: ${port}`;
}

export const ABORTED = Symbol('aborted');
/** Settles like `p`, or with ABORTED once `signal` aborts; a later rejection of `p` is swallowed. */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  p.catch(() => {});
  if (signal.aborted) return Promise.resolve(ABORTED);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** A probe setting, or its default when unset or not positive (the API server's defaults). */
export const positive = (v: number | undefined, dflt: number) =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : dflt;

const toBuffer = (o: Output) => (typeof o === 'string' ? Buffer.from(o) : Buffer.from(o as Uint8Array));

export const errorMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));
