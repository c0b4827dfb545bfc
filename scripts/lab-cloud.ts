// A real Kubernetes control plane for the cloud link's tests and local runs.
//
//   npm run lab:cloud -- build [--kubemark]   build kube-apiserver, -controller-manager, -scheduler
//                                             (and kubemark) 1.20.2 from Debian's source, once
//   npm run lab:cloud -- up [--node NAME]     start etcd + the control plane; print the kubeconfigs
//   npm run lab:cloud -- down                 stop it by PID and delete its state
//
// State lives in $OUTPOST_CLOUD_LAB_DIR (default /tmp/outpost-cloud-lab); binaries in the cache
// (~/.cache/outpost/kubernetes-1.20.2, or $OUTPOST_KUBE_CACHE).
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildControlPlane, kubeCache } from './cloud/build.ts';
import { startControlPlane } from './cloud/plane.ts';

const labDir = () => resolve(process.env.OUTPOST_CLOUD_LAB_DIR ?? '/tmp/outpost-cloud-lab');
const log = (l: string) => process.stderr.write(`lab:cloud: ${l}\n`);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function down(dir: string): Promise<void> {
  const state = join(dir, 'state.json');
  if (existsSync(state)) {
    const pids = JSON.parse(readFileSync(state, 'utf8')).pids as Record<string, number>;
    for (const name of ['kube-scheduler', 'kube-controller-manager', 'kube-apiserver', 'etcd']) {
      const pid = pids[name];
      if (!pid || !alive(pid)) continue;
      process.kill(pid, 'SIGTERM');
      for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
      if (alive(pid)) process.kill(pid, 'SIGKILL');
      log(`stopped ${name} (pid ${pid})`);
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

async function main(argv: string[]): Promise<number> {
  const [cmd = 'up', ...rest] = argv;
  const flag = (name: string) => {
    const i = rest.indexOf(name);
    return i >= 0 ? rest[i + 1] : undefined;
  };
  switch (cmd) {
    case 'build':
      await buildControlPlane({ kubemark: rest.includes('--kubemark'), log });
      return 0;
    case 'up': {
      const dir = labDir();
      if (existsSync(join(dir, 'state.json'))) await down(dir);
      await buildControlPlane({ log });
      const plane = await startControlPlane({ dir, log, detached: true });
      const node = flag('--node') ?? 'edge-1';
      const nodeKc = plane.nodeKubeconfig(node);
      writeFileSync(
        join(dir, 'state.json'),
        JSON.stringify({ server: plane.server, pids: plane.pids() }, null, 2),
      );
      process.stdout.write(
        `server:           ${plane.server}\nadmin kubeconfig: ${plane.adminKubeconfig}\nnode kubeconfig:  ${nodeKc} (system:node:${node})\n` +
          `try:              kubectl --kubeconfig ${plane.adminKubeconfig} get nodes\n` +
          `                  outpost serve --cloud ${nodeKc} --node-name ${node}\n`,
      );
      return 0;
    }
    case 'down':
      await down(labDir());
      return 0;
    case 'where':
      process.stdout.write(`${kubeCache()}\n`);
      return 0;
    default:
      process.stderr.write('usage: lab-cloud.ts build [--kubemark] | up [--node NAME] | down\n');
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: Error) => {
    log(`error: ${e.message}`);
    process.exit(1);
  },
);
