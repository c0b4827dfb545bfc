// `outpost serve`'s flags: one definition for the whole command line (lib/cli/main.ts) and for
// the serve script, which knows only this command (lib/cli/serve-script.ts).
import { type Command, Option } from 'commander';

export interface ServeHooks {
  /** Called once the start's code has run (lib/agent.ts AgentOptions.onWarm). */
  onWarm?: () => void;
}

/** Adds the serve command to `program`; its action imports and starts the agent. */
export function addServe(program: Command, hooks: ServeHooks = {}): void {
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
    .option(
      '--kubelet-port <port>',
      "the node API for the cluster's API server, with --cloud (default 10250)",
    )
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
      await serve(flags, hooks.onWarm ? { onWarm: hooks.onWarm } : {});
    });
}
