// Process exit codes of `outpost serve`. `outpost supervise` reads them: the configuration codes
// mean a restart cannot help, so it stops instead of looping.

export const ExitCode = {
  /** Clean shutdown. */
  Ok: 0,
  /** Unexpected crash (uncaught exception, Node's own default). */
  Crash: 1,
  /** Flags or config file invalid. */
  InvalidConfig: 2,
  /** Data dir unreadable/unwritable, or the metabase schema is newer than this binary. */
  DataDir: 3,
  /** The API listen address could not be bound (in use, permission). */
  ListenFailed: 4,
  /** A critical module exhausted its retry limit (`onGiveUp: 'exit'`). */
  ModuleGaveUp: 5,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** Exit codes after which restarting the same command line cannot succeed. */
export const CONFIG_EXIT_CODES: ReadonlySet<number> = new Set([ExitCode.InvalidConfig, ExitCode.DataDir]);

/** Thrown (or passed to `ctx.fail`) by a module when the whole agent must stop with `exitCode`. */
export class FatalError extends Error {
  readonly exitCode: number;

  constructor(exitCode: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FatalError';
    this.exitCode = exitCode;
  }
}

/**
 * The exit code an error that reached the CLI's top level maps to: FatalError carries its own,
 * invalid configuration is 2, an unusable metabase is 3. By name, so the CLI need not load the
 * modules that define them. Undefined for anything else (a crash).
 */
export function exitCodeOf(err: unknown): number | undefined {
  if (!(err instanceof Error)) return undefined;
  if (err instanceof FatalError) return err.exitCode;
  if (err.name === 'ConfigError') return ExitCode.InvalidConfig;
  if (err.name === 'MetabaseError') return ExitCode.DataDir;
  return undefined;
}
