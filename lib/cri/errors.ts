import { status as GrpcStatus } from '@grpc/grpc-js';
import { grpcDetails, isGrpcError } from '#lib/grpc/errors.ts';
import {
  badRequest,
  conflict,
  internal,
  isStatusError,
  notFound,
  StatusError,
  timeout,
  unavailable,
} from '#lib/kube/status.ts';

/** What a failed CRI call was about, so the Status error can name it. */
export interface CriCallContext {
  /** The runtime endpoint, e.g. `unix:///run/containerd/containerd.sock`. */
  endpoint: string;
  /** The RPC, e.g. `ContainerStatus`. */
  method: string;
  /** The object the call addressed; a NOT_FOUND names it. */
  object?: { kind: string; name: string };
  /** The deadline the call had, for the timeout message. */
  timeoutMs?: number;
  /** Whether the caller's signal had aborted: a CANCELLED is then Outpost's own cancel. */
  aborted?: boolean;
}

/** Translates a failed CRI call into the Status error Outpost's API renders. */
export function toStatusError(err: unknown, ctx: CriCallContext): StatusError {
  if (isStatusError(err)) return err;
  if (!isGrpcError(err)) {
    return internal(`${ctx.method} on ${ctx.endpoint}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const details = grpcDetails(err);
  switch (err.code) {
    case GrpcStatus.NOT_FOUND:
      return ctx.object
        ? notFound(ctx.object.kind, ctx.object.name)
        : new StatusError(404, 'NotFound', `${ctx.method}: ${details}`);
    case GrpcStatus.UNAVAILABLE:
      return unavailable(`container runtime at ${ctx.endpoint} is unavailable: ${details}`);
    case GrpcStatus.DEADLINE_EXCEEDED:
      return timeout(
        `${ctx.method} got no answer from the container runtime at ${ctx.endpoint}` +
          (ctx.timeoutMs === undefined ? '' : ` within ${ctx.timeoutMs} ms`),
      );
    case GrpcStatus.CANCELLED:
      // Outpost cancels a call only when the work that made it stops (the agent stopping): the
      // server cannot do this now, as for DEADLINE_EXCEEDED, and nothing is wrong with the request.
      return unavailable(
        ctx.aborted
          ? `${ctx.method} on the container runtime at ${ctx.endpoint} was cancelled: the agent is stopping`
          : `${ctx.method} was cancelled by the container runtime at ${ctx.endpoint}: ${details}`,
      );
    case GrpcStatus.ALREADY_EXISTS:
      return conflict(`${ctx.method}: ${details}`, ctx.object);
    case GrpcStatus.INVALID_ARGUMENT:
      return badRequest(`${ctx.method}: ${details}`, ctx.object);
    default:
      // FAILED_PRECONDITION, UNKNOWN, INTERNAL, ...: containerd uses these for its own faults as
      // well as for requests its state forbids, so nothing safer than 500 can be said here.
      return internal(`${ctx.method}: ${GrpcStatus[err.code] ?? err.code}: ${details}`);
  }
}
