// The CLI's error type, apart from the HTTP client so that the command line (lib/cli/main.ts)
// can tell a usage error from a crash without loading the client.

/** A failure the CLI prints the way kubectl does and exits non-zero for. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** An invalid flag, argument or environment value: exit code 2, before anything is asked of the server. */
export const usageError = (message: string): CliError => new CliError(message, 2);
