import type { RestartResult } from '#lib/pods/worker/restart.ts';
import { type ApiClient, CliError, usageError } from './client.ts';
import { runClient, stdio } from './commands.ts';
import type { ConnectionFlags } from './connection.ts';
import type { Io } from './get.ts';

/** Splits `pod web`, `pods web db` and `pod/web pod/db` into pod names; only pods restart. */
function podNames(type: string, names: string[]): string[] {
  const args = type.includes('/') ? [type, ...names] : names;
  if (!type.includes('/') && !['pod', 'pods', 'po'].includes(type.toLowerCase()))
    throw usageError(`error: restart is only supported for pods, not "${type}"`);
  return args.map((a) => {
    if (!a.includes('/')) return a;
    const [kind = '', name = ''] = a.split('/');
    if (!['pod', 'pods', 'po'].includes(kind.toLowerCase()))
      throw usageError(`error: restart is only supported for pods, not "${kind}"`);
    return name;
  });
}

/**
 * `outpost restart pod NAME...`: restarts each pod in place and prints the IDs of the containers it
 * stopped (one a line, as `keadm ctl restart` and `crictl stop` do); a failure is printed the way
 * kubectl prints a Status and makes the exit code 1, the other pods are still restarted.
 */
export async function restart(
  client: ApiClient,
  type: string,
  names: string[],
  namespace: string,
  io: Io,
): Promise<number> {
  const pods = podNames(type, names);
  if (pods.length === 0) throw usageError('error: no pod specified for restart');
  let failed = false;
  for (const name of pods) {
    try {
      const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}/restart`;
      const res = await client.send('POST', path);
      const result = (await res.body.json()) as RestartResult;
      io.out(result.stopped.map((s) => `${s.id}\n`).join(''));
    } catch (e) {
      if (!(e instanceof CliError)) throw e;
      failed = true;
      io.err(`${e.message}\n`);
    }
  }
  return failed ? 1 : 0;
}

/** `outpost restart TYPE [NAME...]` with the flags commander parsed (lib/cli/main.ts). */
export const restartCommand = (
  type: string,
  names: string[],
  o: ConnectionFlags & { namespace: string },
): Promise<number> => runClient(o, (client) => restart(client, type, names, o.namespace, stdio));
