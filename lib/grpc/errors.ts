import type { ServiceError } from '@grpc/grpc-js';

/** Whether a value is an error grpc-js produced for a finished call. */
export const isGrpcError = (e: unknown): e is ServiceError =>
  e instanceof Error && typeof (e as Partial<ServiceError>).code === 'number' && 'details' in e;

/**
 * A gRPC error's details as a sentence: grpc-js ends some with an empty `Resolution note: ` (or
 * `Last error: ...` clauses with one), which reads as a cut-off message in a Status.
 */
export const grpcDetails = (e: { details?: string; message: string }): string =>
  (e.details || e.message).replace(/\.?\s*Resolution note:\s*$/, '').replace(/\s+$/, '');
