import type { ServiceError } from '@grpc/grpc-js';

/** Whether a value is an error grpc-js produced for a finished call. */
export const isGrpcError = (e: unknown): e is ServiceError =>
  e instanceof Error && typeof (e as Partial<ServiceError>).code === 'number' && 'details' in e;
