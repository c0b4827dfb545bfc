// `outpost join`: TLS bootstrapping into a cluster (lib/cloud/bootstrap/join.ts), then the
// command that serves as that node. Output follows `kubeadm join`'s closing lines.
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { systemClock } from '#lib/clock.ts';
import { createLogger, type LogLevel } from '#lib/log.ts';

export interface JoinFlags {
  server?: string;
  token?: string;
  caCertHash: string[];
  bootstrapKubeconfig?: string;
  nodeName?: string;
  dataDir: string;
  timeout: string;
  logLevel: LogLevel;
}

/** `outpost join` with the flags commander parsed (lib/cli/main.ts): 0 once joined, else 1. */
export async function joinCommand(f: JoinFlags): Promise<number> {
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
    return 0;
  } catch (e) {
    process.stderr.write(`error: ${(e as Error).message}\n`);
    return 1;
  }
}
