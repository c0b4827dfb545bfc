#!/usr/bin/env node
import { Command, Option } from 'commander';
import { CliError } from '#lib/cli/client.ts';
import { addGet, clientFlags, runClient } from '#lib/cli/commands.ts';
import { addDescribe } from '#lib/cli/describe.ts';
import { addEdit } from '#lib/cli/edit.ts';
import { addExec } from '#lib/cli/exec.ts';
import { addImages } from '#lib/cli/images.ts';
import { addJoin } from '#lib/cli/join.ts';
import { addLogs } from '#lib/cli/logs.ts';
import { addMapper } from '#lib/cli/mapper.ts';
import { addRestart } from '#lib/cli/restart.ts';
import { addAudit, addToken } from '#lib/cli/security.ts';
import { ExitCode, exitCodeOf } from '#lib/supervisor/exit-codes.ts';
import { OUTPOST_VERSION, type versionInfo } from '#lib/version.ts';

let exitCode = 0;
const setExit = (code: number) => {
  exitCode = code;
};

const program = new Command('outpost')
  .description('Offline-first edge node agent: a local Kubernetes-shaped API for the node’s pods and devices')
  .version(OUTPOST_VERSION, '--version')
  .showHelpAfterError()
  .configureOutput({ outputError: (s, write) => write(s) })
  // An unknown option, a bad choice or a missing argument is a usage error: exit 2 (as documented
  // in docs/health.md), which `outpost supervise` does not restart. Help and --version exit 0.
  // Set before the subcommands are added: they inherit it.
  .exitOverride((err) => {
    process.exit(err.exitCode === 0 ? 0 : ExitCode.InvalidConfig);
  });

program
  .command('serve')
  .description('Run the node agent (each flag may also be set as OUTPOST_<FLAG>, e.g. OUTPOST_DATA_DIR)')
  .option('--listen <host:port>', 'address of the local API (default 127.0.0.1:10550)')
  .option('--data-dir <dir>', 'where the metabase lives (default ./data)')
  .option(
    '--manifests <dir>',
    'directory of static Pod/ConfigMap/Secret/Device/DeviceModel manifests (YAML or JSON), watched',
  )
  .option('--node-name <name>', 'this node’s name (default: the host name)')
  .option('--runtime-endpoint <url>', 'CRI endpoint (default unix:///run/containerd/containerd.sock)')
  .addOption(
    new Option(
      '--image-pull <mode>',
      'registry unreachable: fallback (start from the local image) or strict (fail, as kubelet)',
    ).choices(['fallback', 'strict']),
  )
  .option('--dmi-socket <path>', 'DMI socket device mappers register on (default DATA_DIR/dmi.sock)')
  .addOption(
    new Option('--durability <mode>', 'metabase fsync: full (every commit) or normal').choices([
      'full',
      'normal',
    ]),
  )
  .option(
    '--snapshot-interval <duration>',
    'take a verified metabase snapshot this often (default 15m, 0 = off)',
  )
  .option('--snapshot-keep <n>', 'metabase snapshots kept in DATA_DIR/snapshots (default 3)')
  .option('--container-log-max-size <size>', 'rotate a container log past this size (default 10Mi)')
  .option(
    '--container-log-max-files <n>',
    'log files kept per container, the current one included (default 5)',
  )
  .option(
    '--container-log-monitor-interval <duration>',
    'how often container log sizes are checked (default 10s)',
  )
  .addOption(
    new Option('--log-level <level>', 'log level').choices(['debug', 'info', 'warn', 'error', 'silent']),
  )
  .option('--tokens-file <file>', 'bearer tokens (outpost token create); reloaded when it changes')
  .option('--tls-cert <file>', 'serve HTTPS with this certificate (PEM)')
  .option('--tls-key <file>', 'the certificate’s private key (PEM)')
  .option('--client-ca <file>', 'accept client certificates signed by this CA (CN = user, O = role)')
  .addOption(
    new Option(
      '--anonymous-role <role>',
      'TCP callers without credentials: viewer (read non-secret objects; default), none (401), admin (INSECURE: everything)',
    ).choices(['viewer', 'none', 'admin']),
  )
  .option('--insecure-allow-unauthenticated', 'allow a non-loopback --listen without authentication')
  .option('--rate-limit <n>', 'requests per second per LAN client, loopback exempt (default 50, 0 = off)')
  .option('--max-body-bytes <n>', 'largest request body (default 1048576)')
  .option('--max-exec-sessions <n>', 'concurrent exec sessions (default 16)')
  .option('--max-log-streams <n>', 'concurrent followed logs (default 32)')
  .option('--kubelet-port <port>', "the node API for the cluster's API server, with --cloud (default 10250)")
  .option(
    '--node-lease-duration <duration>',
    "the node Lease's duration with --cloud, renewed every quarter of it (default 40s)",
  )
  .option(
    '--node-status-report-frequency <duration>',
    'with --cloud, the node status is patched on a change or at least this often (default 5m)',
  )
  .option(
    '--node-ip <ip>',
    'the address the Node reports and the node API serves on (default: the first non-loopback IPv4)',
  )
  .option(
    '--mqtt <url>',
    'MQTT broker for KubeEdge twin topics and Home Assistant (mqtt://HOST:1883, mqtts://...)',
  )
  .option('--mqtt-username <user>', 'MQTT user name')
  .option('--mqtt-password <password>', 'MQTT password (prefer OUTPOST_MQTT_PASSWORD)')
  .option('--mqtt-ca <file>', 'CA (PEM) that verifies an mqtts:// broker')
  .option('--mqtt-cert <file>', 'MQTT client certificate (PEM)')
  .option('--mqtt-key <file>', 'the MQTT client certificate’s key (PEM)')
  .option('--mqtt-insecure', 'do not verify the broker’s TLS certificate')
  .option('--mqtt-topic-prefix <prefix>', 'prefix of Outpost’s state and command topics (default outpost)')
  .option('--mqtt-discovery-prefix <prefix>', 'Home Assistant discovery prefix (default homeassistant)')
  .option(
    '--cloud <kubeconfig>',
    'join the cluster of this kubeconfig as node --node-name (also OUTPOST_CLOUD_KUBECONFIG)',
  )
  .action(async (flags) => {
    // Loaded on demand: each command evaluates only the modules it uses (start-up time).
    const { serve } = await import('#lib/cli/serve.ts');
    await serve(flags);
  });

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
        o.runtimeEndpoint ?? process.env.OUTPOST_RUNTIME_ENDPOINT ?? 'unix:///run/containerd/containerd.sock',
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
    setExit(
      await runClient(o, async (client) => {
        const v = await client.json<ReturnType<typeof versionInfo>>('/version');
        process.stdout.write(`Server Version: ${v.gitVersion}\n`);
        return 0;
      }),
    );
  });

try {
  await program.parseAsync(process.argv);
  if (exitCode) process.exitCode = exitCode;
} catch (e) {
  // Configuration (2), data directory / metabase (3) and other fatal start-up errors: one clear line.
  const code = e instanceof CliError ? e.exitCode : exitCodeOf(e);
  if (code !== undefined) {
    process.stderr.write(`error: ${(e as Error).message.replace(/^error: /, '')}\n`);
    process.exit(code);
  }
  throw e;
}
