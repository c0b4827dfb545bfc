import type { Table } from '#lib/kube/table.ts';
import type { KubeObject } from '#lib/kube/types.ts';
import { type ApiClient, CliError, TABLE_ACCEPT, usageError } from './client.ts';
import { type Io, runClient, stdio } from './commands.ts';
import type { ConnectionFlags } from './connection.ts';
import { formatObjects, type OutputFormat, parseOutput } from './output.ts';
import { noResourcesFound, TablePrinter } from './print-table.ts';
import { collectionPath, resolveResource } from './resources.ts';

export type { Io } from './commands.ts';

export interface GetOptions {
  namespace: string;
  allNamespaces: boolean;
  selector?: string | undefined;
  fieldSelector?: string | undefined;
  output: OutputFormat;
  watch: boolean;
  showLabels: boolean;
  noHeaders: boolean;
}

/** `outpost get TYPE [NAME...]`: what `kubectl get` prints, errors per missing name, exit 1 if any. */
export async function get(
  client: ApiClient,
  type: string,
  names: string[],
  o: GetOptions,
  io: Io,
): Promise<number> {
  // kubectl accepts `get pod/web pod/db` too.
  if (type.includes('/')) {
    names = [type, ...names].map((n) => n.split('/')[1] ?? '');
    type = type.split('/')[0]!;
  }
  const r = resolveResource(type);
  const ns = o.allNamespaces || !r.namespaced ? undefined : o.namespace;
  const base = collectionPath(r, ns);
  const table = o.output.kind === 'table';
  const toYaml = o.output.kind === 'yaml' ? (await import('./yaml.ts')).toYaml : undefined;
  const printer = new TablePrinter({
    wide: o.output.kind === 'table' && o.output.wide,
    withNamespace: o.allNamespaces && r.namespaced,
    showLabels: o.showLabels,
    noHeaders: o.noHeaders,
  });
  const query = { labelSelector: o.selector, fieldSelector: o.fieldSelector };
  let failed = false;
  let resourceVersion = '0';
  const objects: KubeObject[] = [];
  const rows: Table[] = [];
  if (names.length > 0) {
    if (o.allNamespaces && r.namespaced)
      throw usageError('error: a resource cannot be retrieved by name across all namespaces');
    for (const name of names) {
      try {
        const path = `${collectionPath(r, r.namespaced ? o.namespace : undefined)}/${encodeURIComponent(name)}`;
        if (table) rows.push(await client.json<Table>(path, { accept: TABLE_ACCEPT }));
        else objects.push(await client.json<KubeObject>(path));
      } catch (e) {
        if (!(e instanceof CliError)) throw e;
        failed = true;
        io.err(`${e.message}\n`);
      }
    }
  } else if (table) {
    const t = await client.json<Table>(base, { accept: TABLE_ACCEPT, query: { ...query, limit: '500' } });
    resourceVersion = t.metadata.resourceVersion ?? '0';
    rows.push(t);
  } else {
    const list = await client.json<{ items: KubeObject[]; metadata: { resourceVersion?: string } }>(base, {
      query,
    });
    resourceVersion = list.metadata.resourceVersion ?? '0';
    for (const item of list.items)
      objects.push({ apiVersion: r.base === '/api/v1' ? 'v1' : r.base.slice(6), kind: r.kind, ...item });
  }

  if (table) {
    const merged: Table | undefined = rows[0] && { ...rows[0], rows: rows.flatMap((t) => t.rows) };
    if (merged?.rows.length) io.out(printer.print(merged));
    else if (!failed && names.length === 0 && !o.watch) io.err(noResourcesFound(ns));
  } else if (objects.length || (names.length === 0 && o.output.kind !== 'name')) {
    if (
      names.length === 0 &&
      objects.length === 0 &&
      !o.watch &&
      o.output.kind !== 'json' &&
      o.output.kind !== 'yaml'
    ) {
      io.err(noResourcesFound(ns));
    } else io.out(formatObjects(o.output, objects, names.length === 1 && !failed, nameOf(r), toYaml));
  }
  if (o.watch) {
    const fieldSelector = names.length === 1 ? `metadata.name=${names[0]}` : o.fieldSelector;
    await watch(
      client,
      base,
      { ...query, fieldSelector },
      resourceVersion,
      o,
      printer,
      nameOf(r),
      io,
      toYaml,
    );
  }
  return failed ? 1 : 0;
}

async function watch(
  client: ApiClient,
  path: string,
  query: Record<string, string | undefined>,
  resourceVersion: string,
  o: GetOptions,
  printer: TablePrinter,
  resource: string,
  io: Io,
  toYaml: ((value: unknown) => string) | undefined,
): Promise<void> {
  const table = o.output.kind === 'table';
  const res = await client.send('GET', path, {
    accept: table ? TABLE_ACCEPT : 'application/json',
    query: { ...query, watch: 'true', resourceVersion, allowWatchBookmarks: 'true' },
  });
  let buffered = '';
  for await (const chunk of res.body) {
    buffered += chunk.toString();
    let nl = buffered.indexOf('\n');
    while (nl >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      nl = buffered.indexOf('\n');
      if (!line.trim()) continue;
      const ev = JSON.parse(line) as { type: string; object: unknown };
      if (ev.type === 'BOOKMARK') continue;
      if (ev.type === 'ERROR')
        throw new CliError(`Error from server: ${(ev.object as { message?: string }).message}`);
      if (table) io.out(printer.print(ev.object as Table));
      else io.out(formatObjects(o.output, [ev.object as KubeObject], true, resource, toYaml));
    }
  }
}

/** What `-o name` prefixes: `pod`, or `device.devices.kubeedge.io` for a named API group (kubectl). */
function nameOf(r: { kind: string; base: string }): string {
  const group = r.base.startsWith('/apis/') ? r.base.split('/')[2] : undefined;
  return group ? `${r.kind.toLowerCase()}.${group}` : r.kind.toLowerCase();
}

/** The flags of `outpost get` as commander parses them (lib/cli/main.ts). */
export interface GetFlags extends ConnectionFlags {
  namespace: string;
  allNamespaces: boolean;
  selector?: string;
  fieldSelector?: string;
  output?: string;
  watch: boolean;
  showLabels: boolean;
  headers?: boolean;
}

/** `outpost get TYPE [NAME...]`: parses -o, connects, prints; the exit code. */
export function getCommand(type: string, names: string[], o: GetFlags): Promise<number> {
  return runClient(o, (client) =>
    get(
      client,
      type,
      names,
      {
        namespace: o.namespace,
        allNamespaces: o.allNamespaces,
        selector: o.selector,
        fieldSelector: o.fieldSelector,
        output: parseOutput(o.output),
        watch: o.watch,
        showLabels: o.showLabels,
        noHeaders: o.headers === false,
      },
      stdio,
    ),
  );
}
