import type { Sqlite } from './sqlite.ts';

/**
 * Runs every outermost transaction made with `sqlite.transaction(fn)` through `around` (nested
 * ones are savepoints inside it and pass straight through). The stores all write that way, so
 * this sees every write: timing (metrics), failures for lack of space (disk pressure).
 */
export function aroundTransactions(sqlite: Sqlite, around: <T>(run: () => T) => T): void {
  const original = sqlite.transaction.bind(sqlite);
  const wrapped = (fn: (...args: unknown[]) => unknown) => {
    const tx = original(fn);
    const outer = (...args: unknown[]) => (sqlite.inTransaction ? tx(...args) : around(() => tx(...args)));
    // Keep the deferred/immediate/exclusive variants better-sqlite3 attaches.
    return Object.assign(outer, {
      default: tx.default,
      deferred: tx.deferred,
      immediate: tx.immediate,
      exclusive: tx.exclusive,
    });
  };
  sqlite.transaction = wrapped as typeof sqlite.transaction;
}
