import { type Command, Option } from 'commander';
import { ApiClient, CliError } from './client.ts';
import { type ConnectionFlags, resolveConnection } from './connection.ts';
import { get, type Io } from './get.ts';
import { parseOutput } from './output.ts';

const stdio: Io = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };

/** Global client flags shared by every command that talks to a running Outpost. */
export function clientFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('-s, --server <url>', 'the Outpost API (default http://127.0.0.1:10550)').env(
        'OUTPOST_SERVER',
      ),
    )
    .addOption(new Option('--token <token>', 'bearer token').env('OUTPOST_TOKEN'))
    .addOption(
      new Option(
        '--kubeconfig <file>',
        "a kubeconfig's current context (server, token, CA, client certificate)",
      ).env('OUTPOST_KUBECONFIG'),
    )
    .option('--certificate-authority <file>', 'CA to verify an https server with')
    .option('--client-certificate <file>', 'client certificate (CN = user, O = role)')
    .option('--client-key <file>', 'the client certificate’s key');
}

/** Runs a client command, printing CliErrors the way kubectl prints them. */
export async function runClient(
  flags: ConnectionFlags,
  body: (client: ApiClient) => Promise<number>,
): Promise<number> {
  let client: ApiClient;
  try {
    client = new ApiClient(resolveConnection(flags));
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

/** `get TYPE [NAME...]` with kubectl's flags; registered on the program and under `ctl`. */
export function addGet(parent: Command, setExit: (code: number) => void): void {
  clientFlags(
    parent
      .command('get')
      .description('Display one or many resources (pods, events, namespaces)')
      .argument('<type>', 'pod|pods|po, event|ev, namespace|ns (or TYPE/NAME)')
      .argument('[names...]', 'names to get')
      .option('-n, --namespace <ns>', 'namespace', 'default')
      .option('-A, --all-namespaces', 'list across all namespaces', false)
      .option('-l, --selector <selector>', 'label selector (=, ==, !=, in, notin, key, !key)')
      .option(
        '--field-selector <selector>',
        'field selector (metadata.name, metadata.namespace, spec.nodeName, status.phase)',
      )
      .option('-o, --output <format>', 'wide|json|yaml|name|jsonpath=...|custom-columns=...')
      .option('-w, --watch', 'after listing, watch for changes', false)
      .option('--show-labels', 'show labels as the last column', false)
      .option('--no-headers', "don't print headers"),
  ).action(async (type: string, names: string[], o) => {
    setExit(
      await runClient(o, (client) =>
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
      ),
    );
  });
}
