// `outpost join`: TLS bootstrapping into a cluster (lib/cloud/bootstrap/join.ts), then the
// command that serves as that node. Output follows `kubeadm join`'s closing lines.
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { systemClock } from '#lib/clock.ts';
import { createLogger, type LogLevel } from '#lib/log.ts';

interface JoinFlags {
  server?: string;
  token?: string;
  caCertHash: string[];
  bootstrapKubeconfig?: string;
  nodeName?: string;
  dataDir: string;
  timeout: string;
  logLevel: LogLevel;
}

/** Registers `outpost join`. */
export function addJoin(program: Command, setExit: (code: number) => void): void {
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
    .action(async (f: JoinFlags) => {
      const nodeName = (f.nodeName ?? hostname()).toLowerCase();
      const dataDir = resolve(f.dataDir);
      try {
        // Loaded on demand: the Kubernetes client is not part of every command's start-up.
        const { join } = await import('#lib/cloud/bootstrap/join.ts');
        const kubeconfig = await join({
          nodeName,
          dataDir,
          ...(f.server ? { server: f.server } : {}),
          ...(f.token ? { token: f.token } : {}),
          caCertHashes: f.caCertHash,
          ...(f.bootstrapKubeconfig ? { bootstrapKubeconfig: f.bootstrapKubeconfig } : {}),
          clock: systemClock,
          log: createLogger(f.logLevel),
          timeoutMs: Number(f.timeout) * 1000,
        });
        process.stdout.write(
          `This node has joined the cluster:\n* Certificate signing request was sent to apiserver and approved.\n` +
            `* The node's credentials are in ${dataDir}/pki.\n\nRun it as node ${nodeName}:\n\n` +
            `  outpost serve --cloud ${kubeconfig} --node-name ${nodeName} --data-dir ${dataDir}\n\n` +
            `Run 'kubectl get nodes' on the control-plane to see this node join the cluster.\n`,
        );
      } catch (e) {
        process.stderr.write(`error: ${(e as Error).message}\n`);
        setExit(1);
      }
    });
}
