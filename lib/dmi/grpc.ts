// The DMI service definitions from the generated codecs, and the gRPC ⇄ Status translation
// for calls to mappers.

import { resolve } from 'node:path';
import {
  status as GrpcStatus,
  type ServerErrorResponse,
  type ServerUnaryCall,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { grpcDetails, isGrpcError } from '#lib/grpc/errors.ts';
import { lazyServices } from '#lib/grpc/services.ts';
import { internal, isStatusError, StatusError, timeout, unavailable } from '#lib/kube/status.ts';
import type { Logger } from '#lib/log.ts';
import { load } from './codec.gen.ts';

const service = lazyServices(load);

/** Served by Outpost on its DMI socket. */
export const managerService = service('v1beta1.DeviceManagerService');
/** Served by every mapper. */
export const mapperService = service('v1beta1.DeviceMapperService');

/** `unix:///abs/path` for a socket path (a path already in URI form is kept). */
export const unixTarget = (path: string): string =>
  // Absolute: in `unix://data/dmi.sock` gRPC would read `data` as the authority.
  path.startsWith('unix:') ? path : `unix://${resolve(path)}`;

/** What a failed call to a mapper was about, so the Status error can name it. */
export interface MapperCallContext {
  mapper: string;
  address: string;
  method: string;
  /** The device or model the call addressed. */
  object?: { kind: string; name: string };
  timeoutMs: number;
}

/** Translates a failed mapper call into the Status the API answers with. */
export function mapperError(err: unknown, ctx: MapperCallContext): StatusError {
  if (isStatusError(err)) return err;
  if (!isGrpcError(err)) return internal(`${ctx.method} on mapper "${ctx.mapper}": ${String(err)}`);
  const details = grpcDetails(err);
  const where = `mapper "${ctx.mapper}" at ${ctx.address}`;
  switch (err.code) {
    case GrpcStatus.UNAVAILABLE:
      return unavailable(`${where} is unavailable: ${details}`);
    case GrpcStatus.DEADLINE_EXCEEDED:
      return timeout(`${ctx.method} got no answer from ${where} within ${ctx.timeoutMs} ms`);
    case GrpcStatus.NOT_FOUND:
      return new StatusError(404, 'NotFound', `${ctx.method}: ${where}: ${details}`, ctx.object);
    case GrpcStatus.INVALID_ARGUMENT:
    case GrpcStatus.OUT_OF_RANGE:
    case GrpcStatus.FAILED_PRECONDITION:
      // The mapper refused the values it was given: the client's to fix.
      return new StatusError(422, 'Invalid', `${where} rejected ${ctx.method}: ${details}`, {
        ...ctx.object,
        causes: [{ reason: 'FieldValueInvalid', message: details }],
      });
    case GrpcStatus.UNIMPLEMENTED:
      return new StatusError(501, 'NotImplemented', `${where} does not implement ${ctx.method}`);
    default:
      // A mapper's own fault (UNKNOWN, INTERNAL: a Go mapper returns plain errors as UNKNOWN).
      return new StatusError(502, 'InternalError', `${where} failed ${ctx.method}: ${details}`);
  }
}

/** A refusal a DMI handler answers with this gRPC status (e.g. an empty protocol: INVALID_ARGUMENT). */
export class DmiError extends Error {
  constructor(
    readonly code: 'INVALID_ARGUMENT' | 'NOT_FOUND' | 'FAILED_PRECONDITION',
    message: string,
  ) {
    super(message);
  }
}

const grpcError = (code: GrpcStatus, details: string): Partial<ServerErrorResponse> => ({
  code,
  details,
  name: 'Error',
  message: details,
});

/** A unary server handler: the result, a DmiError with its code, anything else as INTERNAL. */
export function unary<Req>(log: Logger, method: string, fn: (req: Req) => unknown | Promise<unknown>) {
  return (call: ServerUnaryCall<Req, unknown>, callback: sendUnaryData<unknown>) => {
    Promise.resolve()
      .then(() => fn(call.request))
      .then(
        (res) => callback(null, res ?? {}),
        (e: unknown) => {
          if (e instanceof DmiError) {
            log.debug({ method, code: e.code, err: e.message }, 'DMI call refused');
            callback(grpcError(GrpcStatus[e.code], e.message));
          } else {
            log.error({ method, err: e }, 'DMI call failed');
            callback(grpcError(GrpcStatus.INTERNAL, (e as Error).message));
          }
        },
      );
  };
}
