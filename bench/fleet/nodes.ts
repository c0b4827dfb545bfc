// The two fleets the bench compares: N Outposts (the bundle, unchanged, each with its own data
// dir, node credentials and fake CRI socket; one fake-cri process serves every socket) and N
// kubemark hollow kubelets (kubelet 1.20.2 code with kubemark's fake runtime, each in its own mount
// namespace with a private /tmp, since that runtime listens on /tmp/kubelet_remote.sock).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { builtBinary } from '../../scripts/cloud/build.ts';
import { freePort } from '../../scripts/free-port.ts';
import { type OutpostProcess, spawnOutpost } from '../../test/helpers/outpost-process.ts';

const root = join(import.meta.dirname, '../..');
const BUNDLE = process.env.OUTPOST_BUNDLE ?? join(root, 'dist/outpost.cjs');
/** Nodes whose fake runtimes one fake-cri process serves. */
const SOCKETS_PER_RUNTIME = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface FleetNode {
  name: string;
  pid: number;
  /** Outpost's local API (`http://127.0.0.1:PORT`); unset for hollow kubelets. */
  url?: string;
}

export interface FleetOptions {
  /** Where each node's directory goes (outside /tmp: hollow kubelets get a private one). */
  dir: string;
  names: string[];
  /** A node's kubeconfig (its client certificate). */
  kubeconfig: (name: string) => string;
  log: (line: string) => void;
}

export interface Fleet {
  kind: 'outpost' | 'kubelet';
  nodes: FleetNode[];
  /** Every process the fleet runs besides its nodes (the fake-cri process), for cleanliness. */
  helpers: number[];
  stop(): Promise<void>;
}

async function stopChild(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return;
  const exited = new Promise((r) => c.once('exit', r));
  c.kill('SIGTERM');
  const t = setTimeout(() => c.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(t);
}

/** Starts `count` children `batch` at a time, each batch once the previous one answers. */
async function inBatches<T>(count: number, batch: number, start: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < count; i += batch)
    out.push(
      ...(await Promise.all(Array.from({ length: Math.min(batch, count - i) }, (_, j) => start(i + j)))),
    );
  return out;
}

export async function startOutposts(o: FleetOptions): Promise<Fleet> {
  const agents: OutpostProcess[] = [];
  const sockets = o.names.map((n) => join(o.dir, n, 'cri.sock'));
  for (const n of o.names) mkdirSync(join(o.dir, n), { recursive: true });
  // One fake-cri process per SOCKETS_PER_RUNTIME nodes: at 100 nodes one process for all of them
  // was the bottleneck (CRI calls timing out after 30 s at load 120), not the nodes.
  const fakes: { child: ChildProcess; out: string; sockets: number }[] = [];
  for (let i = 0; i < sockets.length; i += SOCKETS_PER_RUNTIME) {
    const group = sockets.slice(i, i + SOCKETS_PER_RUNTIME);
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(root, 'bench/fake-cri/main.ts'),
        ...group.flatMap((s) => ['--listen', `unix://${s}`]),
      ],
      { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const f = { child, out: '', sockets: group.length };
    child.stdout!.on('data', (d) => {
      f.out += d;
    });
    fakes.push(f);
  }
  const stopAll = async () => {
    await Promise.all(agents.map((a) => a.kill9()));
    await Promise.all(fakes.map((f) => stopChild(f.child)));
  };
  try {
    for (const f of fakes)
      for (
        const end = Date.now() + 120_000;
        (f.out.match(/^listening /gm) ?? []).length < f.sockets;
        await sleep(200)
      ) {
        if (f.child.exitCode !== null) throw new Error(`fake-cri exited ${f.child.exitCode}`);
        if (Date.now() > end) throw new Error('fake-cri: not listening within 120 s');
      }
    const nodes = await inBatches(o.names.length, 5, async (i) => {
      const name = o.names[i]!;
      const p = await spawnOutpost({
        bundle: BUNDLE,
        dataDir: join(o.dir, name, 'data'),
        runtimeEndpoint: `unix://${sockets[i]}`,
        nodeName: name,
        logLevel: 'warn',
        args: ['--cloud', o.kubeconfig(name), '--kubelet-port', '0', '--node-ip', '127.0.0.1'],
        startTimeoutMs: 180_000,
      });
      agents.push(p);
      if ((i + 1) % 10 === 0) o.log(`${i + 1} Outposts started`);
      return { name, pid: p.pid, url: p.url };
    });
    return { kind: 'outpost', nodes, helpers: fakes.map((f) => f.child.pid!), stop: stopAll };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

export async function startHollowKubelets(o: FleetOptions): Promise<Fleet> {
  const kubemark = builtBinary('kubemark');
  if (!kubemark) throw new Error('kubemark is not built: run `npm run lab:cloud -- build --kubemark`');
  const children: ChildProcess[] = [];
  const stopAll = async () => {
    await Promise.all(children.map(stopChild));
  };
  try {
    const nodes = await inBatches(o.names.length, 10, async (i) => {
      const name = o.names[i]!;
      mkdirSync(join(o.dir, name), { recursive: true });
      const logFd = openSync(join(o.dir, name, 'kubemark.log'), 'a');
      const port = await freePort();
      // A private /tmp (kubemark's fake runtime listens on /tmp/kubelet_remote.sock); the
      // kubeconfig therefore lives outside /tmp. `exec` keeps the pid: it is kubemark's.
      const cmd = [
        'mount -t tmpfs tmpfs /tmp && exec "$0"',
        `--morph=kubelet --name=${name} --kubeconfig=${o.kubeconfig(name)}`,
        `--kubelet-port=${port} --kubelet-read-only-port=0 --v=1`,
      ].join(' ');
      const child = spawn('unshare', ['-m', 'sh', '-c', cmd, kubemark], { stdio: ['ignore', logFd, logFd] });
      children.push(child);
      await sleep(500);
      if (child.exitCode !== null)
        throw new Error(`kubemark ${name} exited ${child.exitCode}; see ${o.dir}/${name}/kubemark.log`);
      if ((i + 1) % 10 === 0) o.log(`${i + 1} hollow kubelets started`);
      return { name, pid: child.pid! };
    });
    return { kind: 'kubelet', nodes, helpers: [], stop: stopAll };
  } catch (e) {
    await stopAll();
    throw e;
  }
}
