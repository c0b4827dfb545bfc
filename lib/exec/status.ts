// The status channel's payload (channel 3 of v4/v5, the `error` stream of SPDY v4): a Kubernetes
// Status, `Success`, or `Failure` with reason `NonZeroExitCode` and the code in an `ExitCode` cause.

/** A decoded status frame. */
export interface ExecStatus {
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { causes?: { reason?: string; message?: string }[] };
}

/** A failure status frame that is not about the command's exit code (kubectl prints the message, exits 1). */
export function failureStatus(message: string, reason = 'InternalError', code = 500): Buffer {
  return Buffer.from(JSON.stringify({ metadata: {}, status: 'Failure', message, reason, code }));
}

/**
 * The exit code a status frame carries: 0 for Success, N for NonZeroExitCode; undefined for any
 * other failure (the command could not run).
 */
export function exitCodeOf(status: ExecStatus): number | undefined {
  if (status.status === 'Success') return 0;
  if (status.reason !== 'NonZeroExitCode') return undefined;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  const n = Number.parseInt(cause?.message ?? '', 10);
  return Number.isInteger(n) ? n : undefined;
}

/** Parses a status frame; a frame that is not JSON becomes a failure carrying its text. */
export function parseStatus(data: Buffer): ExecStatus {
  try {
    const v = JSON.parse(data.toString('utf8')) as unknown;
    if (v && typeof v === 'object') return v as ExecStatus;
  } catch {}
  return { status: 'Failure', message: data.toString('utf8').trim() };
}
