/** A Kubernetes `Status` cause (metav1.StatusCause). */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** Kubernetes `Status` details (metav1.StatusDetails). */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** The wire shape of a Kubernetes `Status` object. */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message: string;
  reason: string;
  details?: StatusDetails;
  code: number;
}

/** An error that renders as a Kubernetes `Status`; handlers throw it and `app.onError` renders it. */
export class StatusError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: StatusDetails | undefined;

  constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.name = 'StatusError';
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  toStatus(): Status {
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) status.details = this.details;
    return status;
  }
}

/** `pods "web" not found` (404 NotFound). */
export const notFound = (kind: string, name: string, group?: string): StatusError =>
  new StatusError(404, 'NotFound', `${group ? `${kind}.${group}` : kind} "${name}" not found`, {
    name,
    kind,
    ...(group ? { group } : {}),
  });

/** 409 Conflict, e.g. a stale resourceVersion or an operation that the object's state forbids. */
export const conflict = (message: string, details?: StatusDetails): StatusError =>
  new StatusError(409, 'Conflict', message, details);

/** 422 Invalid with one cause per rejected field. */
export const invalid = (kind: string, name: string, causes: StatusCause[]): StatusError =>
  new StatusError(
    422,
    'Invalid',
    `${kind} "${name}" is invalid: ${causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join(', ')}`,
    { name, kind, causes },
  );

/** 400 BadRequest for malformed input the client can fix. */
export const badRequest = (message: string, details?: StatusDetails): StatusError =>
  new StatusError(400, 'BadRequest', message, details);

/** 401 Unauthorized. */
export const unauthorized = (message = 'Unauthorized'): StatusError =>
  new StatusError(401, 'Unauthorized', message);

/** 403 Forbidden. */
export const forbidden = (message: string): StatusError => new StatusError(403, 'Forbidden', message);

/** 405 MethodNotAllowed. */
export const methodNotAllowed = (message: string): StatusError =>
  new StatusError(405, 'MethodNotAllowed', message);

/** 410 Expired, e.g. a watch from a resourceVersion that is no longer kept. */
export const gone = (message: string): StatusError => new StatusError(410, 'Expired', message);

/** 413 RequestEntityTooLarge. */
export const tooLarge = (message: string): StatusError =>
  new StatusError(413, 'RequestEntityTooLarge', message);

/** 429 TooManyRequests. */
export const tooManyRequests = (message: string, retryAfterSeconds = 1): StatusError =>
  new StatusError(429, 'TooManyRequests', message, { retryAfterSeconds });

/** 504 Timeout. */
export const timeout = (message: string): StatusError => new StatusError(504, 'Timeout', message);

/** 503 ServiceUnavailable, e.g. the container runtime or a mapper cannot be reached. */
export const unavailable = (message: string): StatusError =>
  new StatusError(503, 'ServiceUnavailable', message);

/** 500 InternalError: only for Outpost's own faults, never for a client's mistake. */
export const internal = (message: string): StatusError =>
  new StatusError(500, 'InternalError', `Internal error occurred: ${message}`);

/** Whether a value is a Status error thrown by Outpost. */
export const isStatusError = (e: unknown): e is StatusError => e instanceof StatusError;
