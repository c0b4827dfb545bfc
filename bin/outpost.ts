#!/usr/bin/env node
import { Command, Option } from 'commander';
import { MetabaseError } from '../db/open.ts';
import { startAgent } from '../lib/agent.ts';
import { CliError } from '../lib/cli/client.ts';
import { addGet, clientFlags, runClient } from '../lib/cli/commands.ts';
import { ConfigError, resolveServeConfig } from '../lib/config.ts';
import { createLogger } from '../lib/log.ts';
import { OUTPOST_VERSION, type versionInfo } from '../lib/version.ts';

let exitCode = 0;
const setExit = (code: number) => {
  exitCode = code;
};

const program = new Command('outpost')
  .description('Offline-first edge node agent: a local Kubernetes-shaped API for the node’s pods and devices')
  .version(OUTPOST_VERSION, '--version')
  .showHelpAfterError()
  .configureOutput({ outputError: (s, write) => write(s) });

program
  .command('serve')
  .description('Run the node agent (each flag may also be set as OUTPOST_<FLAG>, e.g. OUTPOST_DATA_DIR)')
  .option('--listen <host:port>', 'address of the local API (default 127.0.0.1:10550)')
  .option('--data-dir <dir>', 'where the metabase lives (default ./data)')
  .option('--manifests <dir>', 'directory of static Pod/ConfigMap/Secret manifests (YAML or JSON), watched')
  .option('--node-name <name>', 'this node’s name (default: the host name)')
  .option('--runtime-endpoint <url>', 'CRI endpoint (default unix:///run/containerd/containerd.sock)')
  .addOption(
    new Option('--durability <mode>', 'metabase fsync: full (every commit) or normal').choices([
      'full',
      'normal',
    ]),
  )
  .addOption(
    new Option('--log-level <level>', 'log level').choices(['debug', 'info', 'warn', 'error', 'silent']),
  )
  .action(async (flags) => {
    const config = resolveServeConfig(flags);
    const log = createLogger(config.logLevel);
    const agent = await startAgent(config, log);
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down');
      agent.close().then(
        () => process.exit(0),
        (err) => {
          log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });

// kubectl-style commands, also under `outpost ctl` for people coming from `keadm ctl`.
const ctl = program.command('ctl').description('keadm ctl compatible commands (get, describe, restart, logs, exec, edit)');
for (const parent of [program, ctl]) {
  addGet(parent, setExit);
}

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
  if (e instanceof ConfigError || e instanceof CliError) {
    process.stderr.write(`error: ${e.message.replace(/^error: /, '')}\n`);
    process.exit(e instanceof ConfigError ? 2 : e.exitCode);
  }
  if (e instanceof MetabaseError) {
    process.stderr.write(`error: ${e.message}\n`);
    process.exit(3);
  }
  throw e;
}
