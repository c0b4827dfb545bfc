// The shapes every probe handler shares (core/v1 Probe, outcomes, deadlines) and Go-worded dial
// errors, apart from runProbe so the exec/http/grpc/tcp handlers do not import their dispatcher.

export type IntOrString = number | string;

/** core/v1 Probe (ProbeHandler plus timing). */
export interface K8sProbe {
  exec?: { command?: string[] };
  httpGet?: {
    path?: string;
    port: IntOrString;
    host?: string;
    scheme?: string;
    httpHeaders?: { name: string; value: string }[];
  };
  tcpSocket?: { port: IntOrString; host?: string };
  grpc?: { port: number; service?: string | null };
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}

export type ProbeType = 'liveness' | 'readiness' | 'startup';
/** `unknown` is kubelet's "probe errored": the result is thrown away, not counted. */
export type ProbeResult = 'success' | 'failure' | 'unknown';

export interface ProbeOutcome {
  result: ProbeResult;
  output: string;
  /** A success kubelet reports as a ProbeWarning event (an HTTP redirect it did not follow). */
  warning?: boolean;
}

export type Output = Buffer | Uint8Array | string;
/** CRI ExecSync, e.g. `(id, cmd, t) => cri.execSync(id, cmd, t)`. */
export type ExecFn = (
  containerId: string,
  cmd: string[],
  timeoutSeconds: number,
) => Promise<{ stdout: Output; stderr: Output; exitCode: number }>;

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
}

/** What a probe runs against. `ports` (the container's) resolves a named probe port. */
export interface ProbeTarget {
  containerId: string;
  podIP: string;
  hostIP: string;
  exec: ExecFn;
  ports?: ContainerPort[];
}

/** A probe's time bound on the injected clock, also aborted by the caller's signal. */
export interface Deadline {
  signal: AbortSignal;
  timedOut(): boolean;
}

// kubelet reads at most 10 KiB of exec output and of an HTTP body (maxReadLength, maxRespBodyLength).
export const MAX_OUTPUT = 10 * 1024;

/** Go's net.JoinHostPort: brackets around an IPv6 host. */
export const joinHostPort = (host: string, port: number) =>
  host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;

/** A failed dial as Go's net package words it, e.g. `dial tcp 10.0.0.1:80: connect: connection refused`. */
export function dialFailure(err: Error, host: string, port: number): string {
  const addr = joinHostPort(host, port);
  switch ((err as NodeJS.ErrnoException).code) {
    case 'ECONNREFUSED':
      return `dial tcp ${addr}: connect: connection refused`;
    case 'EHOSTUNREACH':
      return `dial tcp ${addr}: connect: no route to host`;
    case 'ENETUNREACH':
      return `dial tcp ${addr}: connect: network is unreachable`;
    case 'ETIMEDOUT':
      return `dial tcp ${addr}: i/o timeout`;
    case 'ECONNRESET':
      return `read tcp ${addr}: read: connection reset by peer`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${host}: no such host`;
    default:
      return `dial tcp ${addr}: ${err.message}`;
  }
}

export const cancelled: ProbeOutcome = { result: 'unknown', output: 'probe cancelled' };
