// Is the metabase file sound? SQLite's own checks (quick_check on every start, the full
// integrity_check in `outpost doctor`), and the error codes that mean a damaged file.
import type { Sqlite } from './sqlite.ts';

export type CheckMode = 'quick' | 'full';

/** The most problems a check reports (PRAGMA quick_check(N)): enough to name the damage, bounded. */
export const MAX_PROBLEMS = 10;

/** SQLITE_CORRUPT (and its extended codes) or SQLITE_NOTADB: the file is damaged, not merely unreadable. */
export function isCorruption(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB');
}

/**
 * Runs `PRAGMA quick_check` (every page and row, O(N)) or `integrity_check` (also every index
 * against its table); returns at most MAX_PROBLEMS problems, none when the database is sound.
 */
export function checkIntegrity(sqlite: Sqlite, mode: CheckMode = 'quick'): string[] {
  const pragma = mode === 'quick' ? 'quick_check' : 'integrity_check';
  try {
    const rows = sqlite.pragma(`${pragma}(${MAX_PROBLEMS})`) as Record<string, string>[];
    return rows.map((r) => String(Object.values(r)[0] ?? '')).filter((m) => m !== 'ok');
  } catch (e) {
    if (isCorruption(e)) return [(e as Error).message];
    throw e;
  }
}

/** The metabase file is damaged (quick_check failed, or SQLite said so while opening it). */
export class MetabaseCorruptError extends Error {
  override name = 'MetabaseCorruptError';
  constructor(
    readonly path: string,
    readonly problems: string[],
  ) {
    super(`metabase ${path} is damaged: ${problems.slice(0, 3).join('; ')}`);
  }
}
