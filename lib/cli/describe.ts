import type { CoreEvent } from '#lib/kube/printers/events.ts';
import type { Pod } from '#lib/kube/types.ts';
import { type ApiClient, CliError, usageError } from './client.ts';
import { runClient, stdio } from './commands.ts';
import type { ConnectionFlags } from './connection.ts';
import { describeDeviceCommand } from './describe-device.ts';
import { describePod } from './describe-pod.ts';
import type { Io } from './get.ts';
import { noResourcesFound } from './print-table.ts';
import { resolveResource } from './resources.ts';

export interface DescribeOptions {
  namespace: string;
  allNamespaces: boolean;
  selector?: string | undefined;
  showEvents: boolean;
  /** The clock events are aged by (default Date.now). */
  now?: () => number;
}

interface List<T> {
  items: T[];
  metadata: { continue?: string };
}

const podsPath = (ns: string | undefined) =>
  ns === undefined ? '/api/v1/pods' : `/api/v1/namespaces/${encodeURIComponent(ns)}/pods`;

/** Every page of a list, 500 items at a time, as kubectl's FollowContinue reads it. */
async function listAll<T>(client: ApiClient, path: string, query: Record<string, string | undefined>) {
  const items: T[] = [];
  let next: string | undefined;
  do {
    const page = await client.json<List<T>>(path, { query: { ...query, limit: '500', continue: next } });
    items.push(...page.items);
    next = page.metadata.continue || undefined;
  } while (next);
  return items;
}

/** The pod's events, found the way kubectl describe finds them; a failure shows no events, as there. */
async function podEvents(client: ApiClient, pod: Pod): Promise<CoreEvent[]> {
  const { name = '', namespace = '', uid } = pod.metadata;
  const terms = [`involvedObject.name=${name}`, `involvedObject.namespace=${namespace}`];
  if (uid) terms.push(`involvedObject.uid=${uid}`);
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;
  return listAll<CoreEvent>(client, path, { fieldSelector: terms.join(',') }).catch(() => []);
}

/**
 * `outpost describe pod [NAME...]`: kubectl's describe text for each pod (all of the namespace, or
 * those matching `-l`, when no name is given). A single name that does not exist is taken as a name
 * prefix, as kubectl does. Errors are printed like kubectl's; any makes the exit code 1.
 */
export async function describe(
  client: ApiClient,
  type: string,
  names: string[],
  o: DescribeOptions,
  io: Io,
): Promise<number> {
  // `describe pod/web` addresses one pod exactly: no prefix matching then, as in kubectl.
  const slashed = type.includes('/');
  if (slashed) {
    names = [type, ...names].map((n) => n.split('/')[1] ?? '');
    type = type.split('/')[0]!;
  }
  const r = resolveResource(type);
  if (r.kind === 'Device')
    return describeDeviceCommand(client, o.namespace, names, { showEvents: o.showEvents }, io);
  if (r.kind !== 'Pod') throw usageError(`error: outpost describes pods and devices only, not "${type}"`);
  const now = o.now ?? Date.now;
  const text = async (pod: Pod) =>
    describePod(pod, o.showEvents ? await podEvents(client, pod) : undefined, now());
  const ns = o.allNamespaces ? undefined : o.namespace;
  if (names.length === 0) {
    const pods = await listAll<Pod>(client, podsPath(ns), { labelSelector: o.selector });
    const texts = [];
    for (const pod of pods) texts.push(await text(pod));
    if (texts.length === 0) io.err(noResourcesFound(ns));
    io.out(texts.join('\n\n'));
    return 0;
  }
  if (o.allNamespaces)
    throw usageError('error: a resource cannot be retrieved by name across all namespaces');
  const texts: string[] = [];
  const errors: CliError[] = [];
  for (const name of names) {
    try {
      texts.push(await text(await client.json<Pod>(`${podsPath(o.namespace)}/${encodeURIComponent(name)}`)));
    } catch (e) {
      if (!(e instanceof CliError)) throw e;
      errors.push(e);
    }
  }
  if (names.length === 1 && !slashed && errors[0]?.message.startsWith('Error from server (NotFound)')) {
    const prefix = names[0]!;
    const matching = (await listAll<Pod>(client, podsPath(o.namespace), {})).filter((p) =>
      (p.metadata.name ?? '').startsWith(prefix),
    );
    if (matching.length > 0) {
      for (const pod of matching) io.out(`${await text(pod)}\n`);
      return 0;
    }
  }
  io.out(texts.join('\n\n'));
  for (const e of errors) io.err(`${e.message}\n`);
  return errors.length ? 1 : 0;
}

/** `outpost describe TYPE [NAME...]` with the flags commander parsed (lib/cli/main.ts). */
export function describeCommand(
  type: string,
  names: string[],
  o: ConnectionFlags & { namespace: string; allNamespaces: boolean; selector?: string; showEvents: string },
): Promise<number> {
  const flags: DescribeOptions = {
    namespace: o.namespace,
    allNamespaces: o.allNamespaces,
    selector: o.selector,
    showEvents: o.showEvents !== 'false',
  };
  return runClient(o, (client) => describe(client, type, names, flags, stdio));
}
