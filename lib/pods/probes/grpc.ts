// kubelet's grpc probe: grpc.health.v1.Health/Check over plaintext to podIP:port, healthy when the
// answer is SERVING. The two tiny messages are encoded by hand rather than through a proto file.
import type { ServiceError } from '@grpc/grpc-js';
import { Client, credentials, Metadata, status } from '@grpc/grpc-js';
import { KUBE_MINOR } from '#lib/version.ts';
import type { Deadline, K8sProbe, ProbeOutcome } from './types.ts';
import { cancelled, joinHostPort } from './types.ts';

type GRPCAction = NonNullable<K8sProbe['grpc']>;

// grpc.health.v1.HealthCheckResponse.ServingStatus
const SERVING_STATUS = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

/** Runs a grpc probe against `host:action.port`, bounded by `d`. */
export function grpcProbe(
  action: GRPCAction,
  host: string,
  d: Deadline,
  timeoutSeconds: number,
): Promise<ProbeOutcome> {
  if (!host) return Promise.resolve({ result: 'unknown', output: 'no pod IP to probe' });
  const addr = joinHostPort(host, action.port);
  const client = new Client(addr, credentials.createInsecure(), {
    'grpc.primary_user_agent': `kube-probe/1.${KUBE_MINOR}`,
    // Its own connection, so close() tears it down instead of leaving it in the shared pool.
    'grpc.use_local_subchannel_pool': 1,
  });
  return new Promise<ProbeOutcome>((resolve) => {
    const call = client.makeUnaryRequest(
      '/grpc.health.v1.Health/Check',
      encodeCheckRequest,
      decodeCheckResponse,
      action.service ?? '',
      new Metadata(),
      {},
      (err, servingStatus) => {
        d.signal.removeEventListener('abort', onAbort);
        if (err) resolve(failure(err, addr, d, timeoutSeconds));
        else if (servingStatus !== 1) {
          const name = SERVING_STATUS[servingStatus ?? 0] ?? String(servingStatus);
          resolve({ result: 'failure', output: `service unhealthy (responded with "${name}")` });
        } else resolve({ result: 'success', output: 'service is serving' });
      },
    );
    const onAbort = () => call.cancel();
    if (d.signal.aborted) onAbort();
    else d.signal.addEventListener('abort', onAbort);
  }).finally(() => client.close());
}

function failure(err: ServiceError, addr: string, d: Deadline, timeoutSeconds: number): ProbeOutcome {
  if (d.timedOut()) {
    return { result: 'failure', output: `timeout: health rpc did not complete within ${timeoutSeconds}s` };
  }
  if (d.signal.aborted) return cancelled;
  switch (err.code) {
    case status.UNIMPLEMENTED:
      return {
        result: 'failure',
        output: `this server does not implement the grpc health protocol (grpc.health.v1.Health): ${err.details}`,
      };
    case status.UNAVAILABLE:
      return { result: 'failure', output: `error: failed to connect service at "${addr}": ${err.details}` };
    default:
      return {
        result: 'failure',
        output: `error: health rpc probe failed: rpc error: code = ${status[err.code]} desc = ${err.details}`,
      };
  }
}

/** HealthCheckRequest { string service = 1; } */
export function encodeCheckRequest(service: string): Buffer {
  const bytes = Buffer.from(service, 'utf8');
  if (bytes.length === 0) return Buffer.alloc(0);
  return Buffer.concat([Buffer.from([0x0a]), varint(bytes.length), bytes]);
}

/** HealthCheckResponse { ServingStatus status = 1; }: the status number (0 when absent). */
export function decodeCheckResponse(buf: Buffer): number {
  let pos = 0;
  let result = 0;
  const readVarint = () => {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      const b = buf[pos++];
      if (b === undefined || shift > 63) throw new Error('truncated HealthCheckResponse');
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
    }
  };
  while (pos < buf.length) {
    const tag = readVarint();
    const wire = tag % 8;
    if (wire === 0) {
      const v = readVarint();
      if (Math.floor(tag / 8) === 1) result = v;
    } else if (wire === 2) pos += readVarint();
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else throw new Error(`unexpected wire type ${wire} in HealthCheckResponse`);
  }
  return result;
}

function varint(n: number): Buffer {
  const out: number[] = [];
  for (; n >= 0x80; n = Math.floor(n / 128)) out.push((n % 128) | 0x80);
  out.push(n);
  return Buffer.from(out);
}
