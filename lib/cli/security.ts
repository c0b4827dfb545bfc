import type { Command } from 'commander';
import { isRole } from '#lib/auth/roles.ts';
import { createToken } from '#lib/auth/tokens.ts';
import type { AuditRecord } from '#lib/store/audit.ts';
import { usageError } from './client.ts';
import { clientFlags, runClient } from './commands.ts';
import { TabWriter } from './print-table.ts';

/** `outpost token create --tokens-file F --user U --role R`: prints a new token once, stores its hash. */
export function addToken(program: Command, setExit: (code: number) => void): void {
  program
    .command('token')
    .description('Manage API bearer tokens')
    .command('create')
    .description('Create a token: prints it once on stdout and stores only its SHA-256 hash')
    .requiredOption('--tokens-file <file>', 'the tokens file Outpost reads (--tokens-file of serve)')
    .requiredOption('--user <name>', 'the user the token authenticates')
    .requiredOption('--role <role>', 'viewer, operator or admin')
    .action((o: { tokensFile: string; user: string; role: string }) => {
      if (!isRole(o.role)) {
        process.stderr.write(`error: unknown role "${o.role}": use viewer, operator or admin\n`);
        setExit(2);
        return;
      }
      try {
        process.stdout.write(`${createToken(o.tokensFile, o.user, o.role)}\n`);
      } catch (e) {
        process.stderr.write(`error: ${(e as Error).message}\n`);
        setExit(1);
      }
    });
}

/** `outpost audit`: the newest mutating calls recorded by the agent. */
export function addAudit(program: Command, setExit: (code: number) => void): void {
  clientFlags(
    program
      .command('audit')
      .description('List the audit trail: restarts, execs and device edits (who, what, when, result)')
      .option('--limit <n>', 'how many records', '50')
      .option('--user <name>', 'only this user')
      .option('-o, --output <format>', 'json for the raw records'),
  ).action(async (o) => {
    setExit(
      await runClient(o, async (client) => {
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
      }),
    );
  });
}
