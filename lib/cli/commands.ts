// What every client command runs in: the client made from the connection flags, CliErrors
// printed the way kubectl prints them. Loaded only by a command that talks to a server.

import type { versionInfo } from '#lib/version.ts';
import { ApiClient, CliError } from './client.ts';
import { type ConnectionFlags, resolveConnection } from './connection.ts';

/** Where a command prints: its output and its messages. */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** The process's stdout and stderr, for the commands' printers. */
export const stdio: Io = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };

/** Runs a client command, printing CliErrors the way kubectl prints them. */
export async function runClient(
  flags: ConnectionFlags,
  body: (client: ApiClient) => Promise<number>,
): Promise<number> {
  let client: ApiClient;
  try {
    client = new ApiClient(await resolveConnection(flags));
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    process.stderr.write(`${e.message}\n`);
    return e.exitCode;
  }
  try {
    return await body(client);
  } catch (e) {
    if (e instanceof CliError) {
      process.stderr.write(`${e.message}\n`);
      return e.exitCode;
    }
    throw e;
  } finally {
    await client.close();
  }
}

/** `outpost version` without `--client`: the server's version after the client's. */
export function serverVersion(o: ConnectionFlags): Promise<number> {
  return runClient(o, async (client) => {
    const v = await client.json<ReturnType<typeof versionInfo>>('/version');
    process.stdout.write(`Server Version: ${v.gitVersion}\n`);
    return 0;
  });
}
