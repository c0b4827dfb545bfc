// The command line: commander's definitions of every command and flag, and nothing else.
// Each action imports its command's implementation when it runs, so a command compiles and
// evaluates only its own modules (dist/chunks/, docs/architecture.md#the-bundle): `get` loads the
// client and the printer, not the agent; `serve` loads the agent, not the client.
// bin/outpost.ts answers `--version` and `version --client` before importing this, and runs
// `serve` from the serve script on Node (lib/cli/serve-script.ts).
import { type Command, Option } from 'commander';
import { ExitCode } from '#lib/supervisor/exit-codes.ts';
import { OUTPOST_VERSION } from '#lib/version.ts';
import { CliError, usageError } from './errors.ts';
import { hoistGlobalFlags } from './global-flags.ts';
import { parseAndRun, rootCommand } from './program.ts';
import { addServe } from './serve-command.ts';

type SetExit = (code: number) => void;

/** Parses argv and runs the command it names; sets process.exitCode, or exits on a fatal error. */
export async function main(argv: string[]): Promise<void> {
  let exitCode = 0;
  const program = cliProgram((code) => {
    exitCode = code;
  });
  // Client flags before the command (`outpost --kubeconfig F -n x get pods`) go after it.
  const args = [...argv.slice(0, 2), ...hoistGlobalFlags(program, argv.slice(2))];
  await parseAndRun(program, args, () => exitCode);
}

/** Every command and flag of the CLI; each action reports its exit code through `setExit`. */
export function cliProgram(setExit: SetExit): Command {
  const program = rootCommand();
  addServe(program);

  program
    .command('supervise')
    .description(
      'Run `outpost serve` as a child, restarting it with backoff when it crashes (boards without systemd)',
    )
    .usage('[--log-level LEVEL] -- [serve flags]')
    .argument('[serve-flags...]', 'flags for outpost serve, after --')
    .addOption(
      new Option('--log-level <level>', 'the supervisor’s own log level')
        .choices(['debug', 'info', 'warn', 'error', 'silent'])
        .default('info'),
    )
    .allowUnknownOption()
    .action(async (serveFlags: string[], o) => {
      const { supervise } = await import('#lib/cli/supervise.ts');
      setExit(await supervise(serveFlags, { logLevel: o.logLevel }));
    });

  program
    .command('status')
    .description('Print each module’s readiness (/readyz?verbose); exit 1 unless ready')
    // The client flags, declared here so that this command loads none of the client's modules.
    .addOption(
      new Option('-s, --server <url>', 'the Outpost API')
        .env('OUTPOST_SERVER')
        .default('http://127.0.0.1:10550'),
    )
    .addOption(new Option('--token <token>', 'bearer token').env('OUTPOST_TOKEN'))
    .action(async (o) => {
      const { status } = await import('#lib/cli/status.ts');
      setExit(await status(o));
    });

  program
    .command('snapshot')
    .description('Take a verified snapshot of the metabase now (works beside a running agent)')
    .option('--data-dir <dir>', 'the data directory (default OUTPOST_DATA_DIR or ./data)')
    .option('--snapshot-keep <n>', 'snapshots kept, newest first (default 3)', '3')
    .action(async (o) => {
      const { dataDirOf, snapshotCommand } = await import('#lib/cli/metabase.ts');
      const keep = Number(o.snapshotKeep);
      if (!Number.isInteger(keep) || keep < 1) {
        process.stderr.write(
          `error: --snapshot-keep ${JSON.stringify(o.snapshotKeep)}: expected an integer ≥ 1\n`,
        );
        process.exit(ExitCode.InvalidConfig);
      }
      setExit(snapshotCommand({ dataDir: dataDirOf(o.dataDir), keep }));
    });

  program
    .command('restore')
    .description(
      'Replace the metabase by a snapshot (verified first; refused while an agent runs on the data directory)',
    )
    .argument('<file>', 'a snapshot, e.g. DATA_DIR/snapshots/outpost-20261126T214500000Z-scheduled.db')
    .option('--data-dir <dir>', 'the data directory (default OUTPOST_DATA_DIR or ./data)')
    .action(async (file: string, o) => {
      const { dataDirOf, restoreCommand } = await import('#lib/cli/metabase.ts');
      setExit(restoreCommand({ dataDir: dataDirOf(o.dataDir), file }));
    });

  program
    .command('doctor')
    .description(
      'Check the metabase (full integrity_check), its snapshots, free space and lock (exit 1 on damage), and the runtime and its pod network',
    )
    .option('--data-dir <dir>', 'the data directory (default OUTPOST_DATA_DIR or ./data)')
    .option(
      '--runtime-endpoint <endpoint>',
      'the CRI endpoint whose readiness and pod network to report (default OUTPOST_RUNTIME_ENDPOINT or containerd)',
    )
    .action(async (o) => {
      const { dataDirOf, doctorCommand } = await import('#lib/cli/metabase.ts');
      const { doctorRuntime } = await import('#lib/cli/doctor-runtime.ts');
      const code = doctorCommand({ dataDir: dataDirOf(o.dataDir) });
      await doctorRuntime({
        endpoint:
          o.runtimeEndpoint ??
          process.env.OUTPOST_RUNTIME_ENDPOINT ??
          'unix:///run/containerd/containerd.sock',
      });
      setExit(code);
    });

  // kubectl-style commands, also under `outpost ctl` for people coming from `keadm ctl`.
  const ctl = program
    .command('ctl')
    .description('keadm ctl compatible commands (get, describe, restart, logs, exec, edit)');
  for (const parent of [program, ctl]) {
    addGet(parent, setExit);
    addLogs(parent, setExit);
    addExec(parent, setExit);
    addDescribe(parent, setExit);
    addRestart(parent, setExit);
    addEdit(parent, setExit);
  }

  addMapper(program);
  addToken(program, setExit);
  addJoin(program, setExit);
  addAudit(program, setExit);
  addImages(program, setExit);

  clientFlags(program.command('version').description('Print the client and server versions'))
    .option('--client', 'client version only', false)
    .action(async (o) => {
      process.stdout.write(`Client Version: v${OUTPOST_VERSION}\n`);
      if (o.client) return;
      const { serverVersion } = await import('./commands.ts');
      setExit(await serverVersion(o));
    });
  return program;
}

/** Global client flags shared by every command that talks to a running Outpost (GLOBAL_FLAGS lists them). */
function clientFlags(cmd: Command): Command {
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

function addGet(parent: Command, setExit: SetExit): void {
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
    const { getCommand } = await import('./get.ts');
    setExit(await getCommand(type, names, o));
  });
}

function addLogs(parent: Command, setExit: SetExit): void {
  const int = (flag: string) => (v: string) => {
    if (!/^-?\d+$/.test(v)) throw usageError(`error: invalid argument "${v}" for "${flag}" flag`);
    return Number(v);
  };
  clientFlags(
    parent
      .command('logs')
      .description("Print a container's log (the current or previous instance), optionally following it")
      .argument('<pod>', 'pod name (or pod/NAME)')
      .argument('[container]', 'container name (same as -c)')
      .option('-n, --namespace <ns>', 'namespace', 'default')
      .option('-c, --container <name>', 'container (default: the annotated default, else the first)')
      .option('-f, --follow', 'keep streaming new lines until the container ends', false)
      .option('-p, --previous', "the previous instance's log (after a restart)", false)
      .option('--tail <lines>', 'only the last N lines (-1: all)', int('--tail'), -1)
      .option('--since <duration>', 'only lines newer than a relative duration like 5s, 2m or 3h')
      .option('--since-time <time>', 'only lines after an RFC 3339 time, e.g. 2026-01-02T15:04:05Z')
      .option('--timestamps', 'prefix each line with its RFC3339Nano timestamp', false)
      .option('--limit-bytes <n>', 'stop after this many bytes', int('--limit-bytes'))
      .option('--all-containers', "every container's log, init containers first", false),
  ).action(async (pod: string, container: string | undefined, o) => {
    const { logsCommand } = await import('./logs.ts');
    setExit(await logsCommand(pod, container, o));
  });
}

function addExec(parent: Command, setExit: SetExit): void {
  clientFlags(
    parent
      .command('exec')
      .description('Execute a command in a container')
      .argument('<pod>', 'pod name (or pod/NAME)')
      .argument('[command...]', 'the command and its arguments, after --')
      .option('-n, --namespace <ns>', 'namespace', 'default')
      .option('-c, --container <name>', 'container name (default: the only one, or the annotated default)')
      .option('-i, --stdin', 'pass stdin to the container', false)
      .option('-t, --tty', 'stdin is a TTY', false),
  ).action(async (pod: string, command: string[], o) => {
    try {
      const { execCommand } = await import('./exec.ts');
      setExit(await execCommand(pod, command, o));
    } catch (e) {
      if (!(e instanceof CliError)) throw e;
      process.stderr.write(`${e.message}\n`);
      setExit(e.exitCode);
    }
  });
}

function addDescribe(parent: Command, setExit: SetExit): void {
  clientFlags(
    parent
      .command('describe')
      .description("Show a pod's (or a device's) details and events, as kubectl describe prints them")
      .argument('<type>', 'pod|pods|po, device|dev (or TYPE/NAME)')
      .argument('[names...]', 'pods to describe (a single name may be a prefix)')
      .option('-n, --namespace <ns>', 'namespace', 'default')
      .option('-A, --all-namespaces', 'describe pods across all namespaces', false)
      .option('-l, --selector <selector>', 'label selector (=, ==, !=, in, notin, key, !key)')
      .option('--show-events <bool>', 'show the events of each pod', 'true'),
  ).action(async (type: string, names: string[], o) => {
    const { describeCommand } = await import('./describe.ts');
    setExit(await describeCommand(type, names, o));
  });
}

function addRestart(parent: Command, setExit: SetExit): void {
  clientFlags(
    parent
      .command('restart')
      .description('Restart pods in place: stop their running containers, which start again at once')
      .argument('<type>', 'pod|pods|po (or pod/NAME)')
      .argument('[names...]', 'pods to restart')
      .option('-n, --namespace <ns>', 'namespace', 'default'),
  ).action(async (type: string, names: string[], o) => {
    const { restartCommand } = await import('./restart.ts');
    setExit(await restartCommand(type, names, o));
  });
}

function addEdit(parent: Command, setExit: SetExit): void {
  clientFlags(
    parent
      .command('edit')
      .description(
        'Edit a device in $EDITOR (YAML); the change is applied through its mapper, like kubectl edit',
      )
      .argument('<type>', 'device|devices|dev (or device/NAME)')
      .argument('[name]', 'the device to edit')
      .option('-n, --namespace <ns>', 'namespace', 'default'),
  ).action(async (type: string, name: string | undefined, o) => {
    const { editCommand } = await import('./edit.ts');
    setExit(await editCommand(type, name, o));
  });
}

function addMapper(program: Command): void {
  const mapper = program.command('mapper').description('Device mappers shipped with Outpost');
  mapper
    .command('virtual')
    .description(
      'Run the reference mapper: simulated thermometers (temperature, target-temperature, switch) that register with Outpost over DMI, report their twins every cycle and apply desired values',
    )
    .addOption(
      new Option('--socket <path>', 'this mapper’s DeviceMapperService socket').default(
        './data/virtual-mapper.sock',
      ),
    )
    .addOption(
      new Option('--outpost-dmi <path>', 'Outpost’s DMI socket (serve --dmi-socket)')
        .env('OUTPOST_DMI_SOCKET')
        .default('./data/dmi.sock'),
    )
    .option('--name <name>', 'mapper name', 'virtual-mapper')
    .option('--protocol <name>', 'the protocol whose devices this mapper drives', 'virtual')
    .option('--report-cycle <ms>', 'report cycle for devices whose properties set none', '1000')
    .option('--no-data', 'register without asking for the devices (MapperRegister withData=false)')
    .addOption(
      new Option('--log-level <level>', 'log level')
        .choices(['debug', 'info', 'warn', 'error', 'silent'])
        .default('info'),
    )
    .action(async (o) => {
      const { virtualMapperCommand } = await import('./mapper.ts');
      await virtualMapperCommand(o);
    });
}

function addToken(program: Command, setExit: SetExit): void {
  program
    .command('token')
    .description('Manage API bearer tokens')
    .command('create')
    .description('Create a token: prints it once on stdout and stores only its SHA-256 hash')
    .requiredOption('--tokens-file <file>', 'the tokens file Outpost reads (--tokens-file of serve)')
    .requiredOption('--user <name>', 'the user the token authenticates')
    .requiredOption('--role <role>', 'viewer, operator or admin')
    .action(async (o) => {
      const { tokenCreateCommand } = await import('./security.ts');
      setExit(tokenCreateCommand(o));
    });
}

function addJoin(program: Command, setExit: SetExit): void {
  program
    .command('join')
    .description(
      'Join a cluster as a node with a bootstrap token (as kubeadm join): the cluster signs this node’s client certificate',
    )
    .option('--server <url>', 'the API server, https://HOST:6443')
    .option('--token <id.secret>', 'bootstrap token (kubeadm token create, or a bootstrap-token Secret)')
    .option(
      '--ca-cert-hash <sha256:hex>',
      'pin the cluster CA (sha256 of its public key); repeatable',
      (v: string, all: string[]) => [...all, v],
      [],
    )
    .option(
      '--bootstrap-kubeconfig <file>',
      'a kubeconfig with server, CA and bootstrap token (instead of the three above)',
    )
    .option('--node-name <name>', 'this node’s name (default: the host name)')
    .option('--data-dir <dir>', 'where the node keeps its credentials (DATA_DIR/pki)', './data')
    .option('--timeout <seconds>', 'how long to wait for the certificate’s approval', '900')
    .option('--log-level <level>', 'log level', 'warn')
    .action(async (f) => {
      const { joinCommand } = await import('./join.ts');
      setExit(await joinCommand(f));
    });
}

function addAudit(program: Command, setExit: SetExit): void {
  clientFlags(
    program
      .command('audit')
      .description('List the audit trail: restarts, execs and device edits (who, what, when, result)')
      .option('--limit <n>', 'how many records', '50')
      .option('--user <name>', 'only this user')
      .option('-o, --output <format>', 'json for the raw records'),
  ).action(async (o) => {
    const { auditCommand } = await import('./security.ts');
    setExit(await auditCommand(o));
  });
}

function addImages(parent: Command, setExit: SetExit): void {
  const images = clientFlags(
    parent
      .command('images')
      .description("List the runtime's images: size, pinned, the pods that use them")
      .option('-o, --output <format>', 'json|yaml')
      .option('--no-headers', "don't print headers"),
  ).action(async (o) => {
    const { imagesCommand } = await import('./images.ts');
    setExit(await imagesCommand(o));
  });
  clientFlags(
    images
      .command('load')
      .description(
        'Import an image archive on the node (docker save, ctr export, OCI layout tar) into containerd',
      )
      .argument('<file>', 'the archive (.tar)'),
  ).action(async (file: string, _o, cmd: Command) => {
    // `-s` and the other client flags may come before `load` or after it.
    const { imagesLoadCommand } = await import('./images.ts');
    setExit(await imagesLoadCommand(file, cmd.optsWithGlobals()));
  });
}
