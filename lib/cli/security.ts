import { isRole } from '#lib/auth/roles.ts';
import { createToken } from '#lib/auth/tokens.ts';
import type { AuditRecord } from '#lib/store/audit.ts';
import { usageError } from './client.ts';
import { runClient } from './commands.ts';
import type { ConnectionFlags } from './connection.ts';
import { TabWriter } from './print-table.ts';

/** `outpost token create --tokens-file F --user U --role R`: prints a new token once, stores its hash. */
export function tokenCreateCommand(o: { tokensFile: string; user: string; role: string }): number {
  if (!isRole(o.role)) {
    process.stderr.write(`error: unknown role "${o.role}": use viewer, operator or admin\n`);
    return 2;
  }
  try {
    process.stdout.write(`${createToken(o.tokensFile, o.user, o.role)}\n`);
    return 0;
  } catch (e) {
    process.stderr.write(`error: ${(e as Error).message}\n`);
    return 1;
  }
}

/** `outpost audit`: the audit trail as a table, or its raw records with `-o json`. */
export function auditCommand(
  o: ConnectionFlags & { limit: string; user?: string; output?: string },
): Promise<number> {
  return runClient(o, async (client) => {
    if (!/^\d+$/.test(o.limit))
      throw usageError(`error: --limit must be a positive integer, got "${o.limit}"`);
    const list = await client.json<{ items: AuditRecord[] }>('/audit', {
      query: { limit: o.limit, user: o.user },
    });
    if (o.output === 'json') {
      process.stdout.write(`${JSON.stringify(list, null, 4)}\n`);
      return 0;
    }
    if (list.items.length === 0) {
      process.stderr.write('No audit records found\n');
      return 0;
    }
    const tw = new TabWriter();
    tw.write('TIME\tUSER\tROLE\tVERB\tPATH\tCODE\tDETAIL\n');
    for (const r of list.items) {
      const detail = r.detail === null ? '' : JSON.stringify(r.detail);
      tw.write(`${r.at}\t${r.user}\t${r.role}\t${r.verb}\t${r.path}\t${r.code}\t${detail}\n`);
    }
    process.stdout.write(tw.flush());
    return 0;
  });
}
