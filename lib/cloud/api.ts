// The narrow HTTP surface the cloud link's sync code uses, so the outbox sender and the
// reflectors run against the real API server through one keep-alive client, and against small
// fakes in unit tests.

/** An API server answer: the HTTP status and the decoded JSON body (a Status on errors). */
export interface ApiResponse {
  status: number;
  body: unknown;
}

/**
 * One request to the API server. Resolves with any HTTP answer (4xx/5xx included); rejects only
 * when no answer came (connection refused, TLS failure, timeout): the link is down.
 */
export type ApiRequest = (
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
  contentType?: string,
) => Promise<ApiResponse>;

export const STRATEGIC_MERGE = 'application/strategic-merge-patch+json';
export const MERGE_PATCH = 'application/merge-patch+json';

/** An answer that says the server is there but cannot take the request now: try again later. */
export const isRetryable = (status: number): boolean => status === 429 || status === 401 || status >= 500;

/** The message of a Status body, for logs. */
export function statusMessage(r: ApiResponse): string {
  const b = r.body as { message?: unknown } | undefined;
  return typeof b?.message === 'string' ? b.message : `HTTP ${r.status}`;
}

/** Thrown by sync code when a request got no answer or a retryable one: the caller backs off. */
export class LinkError extends Error {
  override name = 'LinkError';
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}
