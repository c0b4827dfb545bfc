import pino from 'pino';

/** The structured logger every module receives (pino's call shape: fields first, then the message). */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  child(bindings: object): Logger;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** JSON lines on stderr, so stdout stays free for command output. */
export function createLogger(level: LogLevel = 'info'): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // `"level":"warn"` rather than pino's 40: readable in journalctl and with jq.
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.destination(2),
  );
}

/** A logger that drops everything, for tests. */
export const silentLogger: Logger = pino({ level: 'silent' });
