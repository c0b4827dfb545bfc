import type { Metabase } from '#db/open.ts';
import type { Sqlite, Statement } from '#db/sqlite.ts';

export interface AuditRecord {
  id: number;
  at: string;
  user: string;
  role: string;
  source: string | null;
  verb: string;
  path: string;
  namespace: string | null;
  name: string | null;
  detail: unknown;
  code: number;
}

type Row = Omit<AuditRecord, 'detail'> & { detail: string | null };

/** The audit trail of mutating calls, in the metabase. */
export class AuditStore {
  readonly #insert: Statement<unknown[]>;
  readonly #sqlite: Sqlite;

  constructor(mb: Metabase) {
    this.#sqlite = mb.sqlite;
    this.#insert = mb.sqlite.prepare(
      'INSERT INTO audit (at, user, role, source, verb, path, namespace, name, detail, code) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
  }

  record(r: Omit<AuditRecord, 'id'>): void {
    this.#insert.run(
      r.at,
      r.user,
      r.role,
      r.source,
      r.verb,
      r.path,
      r.namespace,
      r.name,
      r.detail === undefined ? null : JSON.stringify(r.detail),
      r.code,
    );
  }

  /** The newest records first, optionally only those after `sinceId`. */
  list(opts: { limit?: number; user?: string | undefined } = {}): AuditRecord[] {
    const where = opts.user ? 'WHERE user = ?' : '';
    const rows = this.#sqlite
      .prepare<unknown[], Row>(`SELECT * FROM audit ${where} ORDER BY id DESC LIMIT ?`)
      .all(...(opts.user ? [opts.user] : []), opts.limit ?? 100);
    return rows.map((r) => ({ ...r, detail: r.detail === null ? null : JSON.parse(r.detail) }));
  }
}
