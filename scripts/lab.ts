// A private containerd for end-to-end tests and local runs, built without network.
//
//   npx tsx scripts/lab.ts up       start (or reuse) the lab; prints the CRI endpoint
//   npx tsx scripts/lab.ts down     remove its pods, stop it by PID, delete its state
//   npx tsx scripts/lab.ts status   print whether it runs (exit 1 when not)
//   npx tsx scripts/lab.ts pick     the runtime for `npm start`: $OUTPOST_RUNTIME_ENDPOINT, the system
//                                   containerd when it answers, else this lab (started)
//
// State lives in $OUTPOST_LAB_DIR (default .lab/lab in the checkout; the test suite's own is
// .lab/test); built image tars are kept in its images/ folder across `down`, so only the first
// start compiles and packs anything.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CriClient } from '#lib/cri/client.ts';

/** The lab of `npm start` and `npm run lab`: .lab/lab in the checkout (the tests use .lab/test). */
export const DEFAULT_LAB_DIR = resolve(import.meta.dirname, '..', '.lab', 'lab');

export const LAB_IMAGES = { pause: 'outpost.local/pause:latest', app: 'outpost.local/busybox:latest' };

export interface LabOptions {
  /** State directory; default $OUTPOST_LAB_DIR or .lab/lab in the checkout. */
  dir?: string;
  /** Progress lines; default stderr. */
  log?: (line: string) => void;
  /** Keep the lab running after the last handle is released (what `lab.ts up` asks for). */
  keep?: boolean;
}

export interface Lab {
  endpoint: string;
  socket: string;
  root: string;
  pid: number;
  images: { pause: string; app: string };
  /** True when the lab was already running. */
  reused: boolean;
  /**
   * Releases this handle. The lab stops once no handle in any process holds it, unless it was
   * started (or found) with `keep`, as `lab.ts up` does; `lab.ts down` stops it regardless.
   */
  stop(): Promise<void>;
}

const PATH = [
  process.env.PATH ?? '',
  '/usr/local/sbin',
  '/usr/local/bin',
  '/usr/sbin',
  '/usr/bin',
  '/sbin',
  '/bin',
]
  .filter(Boolean)
  .join(delimiter);
const env: NodeJS.ProcessEnv = { ...process.env, PATH, DEBIAN_FRONTEND: 'noninteractive' };

interface Paths {
  dir: string;
  config: string;
  pidfile: string;
  logfile: string;
  socket: string;
  images: string;
}

function paths(opts: LabOptions): Paths {
  const dir = resolve(opts.dir ?? process.env.OUTPOST_LAB_DIR ?? DEFAULT_LAB_DIR);
  // sun_path holds 107 bytes, and containerd adds ".ttrpc" for its second socket.
  let socket = join(dir, 'containerd.sock');
  if (socket.length + 6 > 100) {
    socket = join(tmpdir(), `olab-${createHash('sha256').update(dir).digest('hex').slice(0, 10)}`, 'c.sock');
  }
  const [config, pidfile, logfile, images] = [
    'config.toml',
    'containerd.pid',
    'containerd.log',
    'images',
  ].map((f) => join(dir, f)) as [string, string, string, string];
  return { dir, config, pidfile, logfile, socket, images };
}

const defaultLog = (line: string) => process.stderr.write(`lab: ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(2)} s`;

function run(cmd: string, args: string[], opts: { cwd?: string } = {}): Promise<string> {
  return new Promise((ok, fail) =>
    execFile(cmd, args, { ...opts, env, maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      err ? fail(new Error(`${cmd} ${args.join(' ')}: ${stderr.trim() || err.message}`)) : ok(stdout),
    ),
  );
}

function which(cmd: string): string | undefined {
  for (const dir of PATH.split(delimiter)) {
    try {
      accessSync(join(dir, cmd), constants.X_OK);
      return join(dir, cmd);
    } catch {}
  }
  return undefined;
}

// ---- processes ----

const cmdline = (pid: number | string): string[] => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
};

/** The PID of this lab's containerd, or undefined (a stale or foreign pidfile counts as none). */
function runningPid(p: Paths): number | undefined {
  const pid = Number.parseInt(existsSync(p.pidfile) ? readFileSync(p.pidfile, 'utf8') : '', 10);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const args = cmdline(pid); // empty for a dead process or a zombie
  return basename(args[0] ?? '') === 'containerd' && args.includes(p.config) ? pid : undefined;
}

// Shims outlive containerd by design; theirs carry `-address <socket>`.
const shimPids = (p: Paths): number[] =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      const args = cmdline(d);
      return basename(args[0] ?? '').startsWith('containerd-shim') && args.includes(p.socket);
    })
    .map(Number);

async function killAndWait(pid: number, graceMs: number): Promise<void> {
  const alive = () => cmdline(pid).length > 0;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  for (const end = Date.now() + graceMs; Date.now() < end && alive(); ) await sleep(50);
  if (alive()) process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 100 && alive(); i++) await sleep(20);
}

// ---- locking: one lab operation at a time, across processes and within this one ----

const chains = new Map<string, Promise<unknown>>();

function locked<R>(p: Paths, fn: () => Promise<R>): Promise<R> {
  const task = (chains.get(p.dir) ?? Promise.resolve())
    .catch(() => {})
    .then(async () => {
      mkdirSync(p.dir, { recursive: true });
      const lock = join(p.dir, '.lock');
      for (const end = Date.now() + 15 * 60_000; ; await sleep(100)) {
        try {
          mkdirSync(lock);
          writeFileSync(join(lock, 'pid'), String(process.pid));
          break;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
          const owner = Number(existsSync(join(lock, 'pid')) ? readFileSync(join(lock, 'pid'), 'utf8') : 0);
          if (owner && cmdline(owner).length === 0) rmSync(lock, { recursive: true, force: true }); // stale
          if (Date.now() > end) throw new Error(`lab: ${lock} is held by PID ${owner}`);
        }
      }
      try {
        return await fn();
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
    });
  chains.set(p.dir, task);
  return task;
}

// ---- packages and images ----

async function ensurePackages(log: (l: string) => void): Promise<void> {
  const missing = [
    ...(which('containerd') && which('ctr') ? [] : ['containerd']),
    ...(which('runc') ? [] : ['runc']),
    ...(existsSync('/usr/lib/cni/bridge') ? [] : ['containernetworking-plugins']),
    ...(which('iptables') ? [] : ['iptables']),
    ...(staticBusybox() ? [] : ['busybox-static']),
  ];
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0)
    throw new Error(`lab: needs ${missing.join(', ')}; run as root to install them`);
  const install = ['install', '-y', '--no-install-recommends', ...missing];
  log(`installing ${missing.join(' ')} with apt-get`);
  const apt = (args: string[]) => run('apt-get', ['-q', ...args]);
  await apt(install).catch(async () => {
    log('apt-get update');
    await apt(['update']);
    await apt(install);
  });
  if (!staticBusybox()) throw new Error('lab: busybox-static installed but no static /bin/busybox found');
}

function staticBusybox(): string | undefined {
  return ['/bin/busybox', '/usr/bin/busybox'].find(isStaticElf);
}

// A static executable has no PT_INTERP program header.
function isStaticElf(path: string): boolean {
  let b: Buffer;
  try {
    b = readFileSync(path);
  } catch {
    return false;
  }
  if (b.length < 64 || b.readUInt32BE(0) !== 0x7f454c46) return false;
  const is64 = b[4] === 2;
  const le = b[5] === 1;
  const u16 = (o: number) => (le ? b.readUInt16LE(o) : b.readUInt16BE(o));
  const u32 = (o: number) => (le ? b.readUInt32LE(o) : b.readUInt32BE(o));
  const phoff = is64 ? Number(le ? b.readBigUInt64LE(0x20) : b.readBigUInt64BE(0x20)) : u32(0x1c);
  const [size, count] = is64 ? [u16(0x36), u16(0x38)] : [u16(0x2a), u16(0x2c)];
  for (let i = 0; i < count; i++) if (u32(phoff + i * size) === 3) return false;
  return true;
}

// Sleeps until SIGTERM/SIGINT and reaps children, like the upstream pause container.
const PAUSE_C = `#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
static void stop(int sig) { (void)sig; _exit(0); }
static void reap(int sig) { (void)sig; while (waitpid(-1, 0, WNOHANG) > 0) {} }
int main(void) {
  signal(SIGTERM, stop);
  signal(SIGINT, stop);
  signal(SIGCHLD, reap);
  for (;;) pause();
}
`;
const SH_PAUSE = ['/bin/sh', '-c', "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait; done"];
const ARCH: Record<string, string> = {
  x64: 'amd64',
  arm64: 'arm64',
  arm: 'arm',
  ia32: '386',
  ppc64: 'ppc64le',
};

interface ImageSpec {
  tag: string;
  /** Builds the root file system into the given empty directory. */
  fill(rootfs: string): void;
  config: Record<string, unknown>;
}

/** Writes a docker-archive tar (manifest.json, config, one layer) of the image. */
async function packImage(spec: ImageSpec, work: string, out: string): Promise<void> {
  rmSync(work, { recursive: true, force: true });
  const rootfs = join(work, 'rootfs');
  mkdirSync(rootfs, { recursive: true });
  spec.fill(rootfs);
  const tarFlags = ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner'];
  const layer = join(work, 'layer.tar');
  await run('tar', [...tarFlags, '-C', rootfs, '-cf', layer, ...readdirSync(rootfs).sort()]);
  const diffId = createHash('sha256').update(readFileSync(layer)).digest('hex');
  const config = JSON.stringify({
    architecture: ARCH[process.arch] ?? process.arch,
    os: 'linux',
    created: '1970-01-01T00:00:00Z',
    config: spec.config,
    rootfs: { type: 'layers', diff_ids: [`sha256:${diffId}`] },
  });
  const configId = createHash('sha256').update(config).digest('hex');
  writeFileSync(join(work, `${configId}.json`), config);
  mkdirSync(join(work, diffId));
  renameSync(layer, join(work, diffId, 'layer.tar'));
  const manifest = [{ Config: `${configId}.json`, RepoTags: [spec.tag], Layers: [`${diffId}/layer.tar`] }];
  writeFileSync(join(work, 'manifest.json'), JSON.stringify(manifest));
  await run('tar', [
    ...tarFlags,
    '-C',
    work,
    '-cf',
    out,
    'manifest.json',
    `${configId}.json`,
    `${diffId}/layer.tar`,
  ]);
  rmSync(work, { recursive: true, force: true });
}

/** Builds the pause and app image tars unless the cache already holds them for these inputs. */
async function buildImages(p: Paths, log: (l: string) => void): Promise<{ pause: string; app: string }> {
  const busybox = staticBusybox()!;
  const applets = (await run(busybox, ['--list'])).split('\n').filter((a) => a && a !== 'busybox');
  const gcc = which('gcc');
  const key = createHash('sha256')
    .update(JSON.stringify({ v: 1, arch: process.arch, gcc: Boolean(gcc), PAUSE_C, SH_PAUSE, applets }))
    .update(readFileSync(busybox))
    .digest('hex');
  const tars = { pause: join(p.images, 'pause.tar'), app: join(p.images, 'app.tar') };
  const keyFile = join(p.images, 'key');
  if (
    existsSync(keyFile) &&
    readFileSync(keyFile, 'utf8') === key &&
    existsSync(tars.pause) &&
    existsSync(tars.app)
  ) {
    return tars;
  }
  const started = performance.now();
  mkdirSync(p.images, { recursive: true });
  rmSync(keyFile, { force: true });
  const base = (rootfs: string) => {
    for (const d of ['bin', 'etc', 'proc', 'sys', 'dev', 'root', 'tmp', 'usr/bin', 'var/www']) {
      mkdirSync(join(rootfs, d), { recursive: true, mode: d === 'tmp' ? 0o1777 : 0o755 });
    }
    writeFileSync(
      join(rootfs, 'etc/passwd'),
      'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534::/:/bin/false\n',
    );
    writeFileSync(join(rootfs, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\n');
  };
  const installBusybox = (rootfs: string) => {
    copyFileSync(busybox, join(rootfs, 'bin/busybox'));
    for (const a of applets) symlinkSync('busybox', join(rootfs, 'bin', a));
    symlinkSync('../../bin/busybox', join(rootfs, 'usr/bin/env'));
  };
  const pathEnv = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
  const pauseBin = gcc ? await compilePause(gcc, p, log) : undefined;
  const pause: ImageSpec = {
    tag: LAB_IMAGES.pause,
    fill(rootfs) {
      if (pauseBin) return copyFileSync(pauseBin, join(rootfs, 'pause'));
      base(rootfs);
      installBusybox(rootfs);
    },
    config: { Env: [pathEnv], Entrypoint: pauseBin ? ['/pause'] : SH_PAUSE, WorkingDir: '/' },
  };
  const app: ImageSpec = {
    tag: LAB_IMAGES.app,
    fill(rootfs) {
      base(rootfs);
      installBusybox(rootfs);
    },
    config: { Env: [pathEnv], Cmd: ['sh'], WorkingDir: '/' },
  };
  await packImage(pause, join(p.dir, 'build-pause'), tars.pause);
  await packImage(app, join(p.dir, 'build-app'), tars.app);
  writeFileSync(keyFile, key);
  log(`built images ${LAB_IMAGES.pause}, ${LAB_IMAGES.app} (${seconds(started)})`);
  return tars;
}

async function compilePause(gcc: string, p: Paths, log: (l: string) => void): Promise<string | undefined> {
  const src = join(p.images, 'pause.c');
  writeFileSync(src, PAUSE_C);
  try {
    await run(gcc, ['-static', '-Os', '-s', '-o', join(p.images, 'pause'), src]);
    return join(p.images, 'pause');
  } catch (e) {
    log(
      `gcc -static failed; the pause image runs busybox sh instead: ${(e as Error).message.split('\n')[0]}`,
    );
    return undefined;
  }
}

// ---- containerd ----

function configToml(p: Paths): string {
  const dir = (d: string) => JSON.stringify(join(p.dir, d));
  const cri = '[plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = ${dir('root')}
state = ${dir('state')}
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = ${JSON.stringify(p.socket)}

[plugins]
  ${cri}]
    sandbox_image = ${JSON.stringify(LAB_IMAGES.pause)}
    # Without it every sandbox fails here: the kernel refuses oom_score_adj -998 to runc.
    restrict_oom_score_adj = true
    # Pod network namespaces under the lab's state, not the machine's /run/netns.
    netns_mounts_under_state_dir = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    ${cri}.containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      ${cri}.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        ${cri}.containerd.runtimes.runc.options]
          Root = ${dir('runc')}
    # Pod networks: Debian's containernetworking-plugins and the lab's own conflist (cniConflist).
    ${cri}.cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = ${dir('cni')}
      max_conf_num = 1
  [plugins."io.containerd.internal.v1.opt"]
    path = ${dir('opt')}
`;
}

/**
 * The lab's pod network: a bridge and a /24 of 10.128.0.0/10 of its own, both derived from the
 * lab's directory, so labs of several checkouts run side by side on one machine. A subnet some
 * other interface routes already is skipped.
 */
export function labNetwork(dir: string): { name: string; bridge: string; subnet: string } {
  const hash = createHash('sha256').update(resolve(dir)).digest();
  const bridge = `olab${hash.subarray(0, 4).toString('hex').slice(0, 8)}`;
  const routes = spawnSync('ip', ['-4', 'route', 'show'], { env, encoding: 'utf8' }).stdout ?? '';
  let n = hash.readUInt16BE(4) % (64 * 256);
  for (let i = 0; i < 64 * 256; i++, n = (n + 1) % (64 * 256)) {
    const subnet = `10.${128 + (n >> 8)}.${n & 255}.0/24`;
    const line = routes.split('\n').find((l) => l.startsWith(`${subnet} `));
    if (!line || line.includes(` dev ${bridge} `)) return { name: `outpost-${bridge}`, bridge, subnet };
  }
  throw new Error('lab: no free /24 in 10.128.0.0/10 for the pod network');
}

/**
 * The conflist a node installer writes into containerd's CNI conf_dir: bridge (with masquerade)
 * + host-local + portmap. host-local keeps its leases under the runtime's state directory, which
 * a node keeps on tmpfs like /run, so a power cut cannot leave leases of dead pods behind.
 */
export function cniConflist(net: { name: string; bridge: string; subnet: string }, leaseDir: string): string {
  return `${JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: net.name,
      plugins: [
        {
          type: 'bridge',
          bridge: net.bridge,
          isGateway: true,
          ipMasq: true,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: net.subnet }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: leaseDir,
          },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  )}\n`;
}

/** Where the lab's host-local plugin keeps its leases (one file per pod IP, under network/). */
export const labLeaseDir = (dir: string) => join(resolve(dir), 'state', 'cni-ipam');

/** Starts containerd on the lab's config and waits until CRI answers; returns its PID. */
async function startContainerd(p: Paths, log: (l: string) => void): Promise<number> {
  const started = performance.now();
  for (const d of ['root', 'state', 'runc', 'cni', 'opt']) mkdirSync(join(p.dir, d), { recursive: true });
  mkdirSync(resolve(p.socket, '..'), { recursive: true });
  rmSync(p.socket, { force: true });
  writeFileSync(p.config, configToml(p));
  writeFileSync(
    join(p.dir, 'cni', '10-outpost-lab.conflist'),
    cniConflist(labNetwork(p.dir), labLeaseDir(p.dir)),
  );
  const out = openSync(p.logfile, 'w');
  const child = spawn('containerd', ['--config', p.config], {
    detached: true,
    stdio: ['ignore', out, out],
    env,
  });
  let exited: string | undefined;
  child.on('exit', (code, signal) => (exited = `containerd exited (${signal ?? code})`));
  child.on('error', (e) => (exited = e.message));
  child.unref();
  const pid = child.pid ?? 0;
  writeFileSync(p.pidfile, String(pid));
  const client = new CriClient({ endpoint: `unix://${p.socket}`, timeoutMs: 2_000 });
  try {
    for (const end = Date.now() + 60_000; ; await sleep(50)) {
      if (exited) throw new Error(`lab: ${exited}; ${p.logfile}:\n${logTail(p)}`);
      if (Date.now() > end)
        throw new Error(`lab: containerd did not serve CRI within 60 s; ${p.logfile}:\n${logTail(p)}`);
      if (!existsSync(p.socket)) continue;
      const status = await client.status().catch(() => undefined);
      if (status?.conditions.some((c) => c.type === 'RuntimeReady' && c.status)) break;
    }
  } catch (e) {
    await killAndWait(pid, 2_000);
    throw e;
  } finally {
    client.close();
  }
  log(`containerd ${pid} serving CRI on ${p.socket} (${seconds(started)})`);
  return pid;
}

const logTail = (p: Paths) => readFileSync(p.logfile, 'utf8').split('\n').slice(-15).join('\n');

/** Imports the lab images that the runtime does not have yet. */
async function importImages(p: Paths, tars: { pause: string; app: string }, log: (l: string) => void) {
  const client = new CriClient({ endpoint: `unix://${p.socket}`, timeoutMs: 10_000 });
  try {
    const started = performance.now();
    const missing = [];
    for (const k of ['pause', 'app'] as const)
      if (!(await client.imageStatus(LAB_IMAGES[k]))) missing.push(tars[k]);
    if (missing.length === 0) return;
    await Promise.all(
      missing.map((t) => run('ctr', ['--address', p.socket, '-n', 'k8s.io', 'images', 'import', t])),
    );
    for (const k of ['pause', 'app'] as const) {
      if (!(await client.imageStatus(LAB_IMAGES[k])))
        throw new Error(`lab: ${LAB_IMAGES[k]} missing after import`);
    }
    log(`imported ${missing.length} image(s) (${seconds(started)})`);
  } finally {
    client.close();
  }
}

/** Stops and removes every pod sandbox (and stray container) the runtime knows. */
async function removeAllPods(p: Paths): Promise<number> {
  const client = new CriClient({ endpoint: `unix://${p.socket}`, timeoutMs: 20_000 });
  try {
    const pods = await client.listPodSandbox();
    await Promise.allSettled(
      pods.map(async (pod) => {
        await client.stopPodSandbox(pod.id).catch(() => {});
        await client.removePodSandbox(pod.id);
      }),
    );
    const stray = await client.listContainers();
    await Promise.allSettled(stray.map((c) => client.removeContainer(c.id)));
    return pods.length;
  } finally {
    client.close();
  }
}

function unmountAll(p: Paths): void {
  const roots = [`${p.dir}/`, `${resolve(p.socket, '..')}/`];
  const points = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) =>
      l.split(' ')[4]?.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8))),
    )
    .filter((m): m is string => Boolean(m) && roots.some((r) => m!.startsWith(r)))
    .sort((a, b) => b.length - a.length);
  for (const m of points) {
    const plain = spawnSync('umount', [m], { env });
    if (plain.status !== 0) spawnSync('umount', ['-l', m], { env });
  }
}

// ---- the API ----

// Every handle is a lease file, leases/<pid>.<n>; a lab that startLab started without `keep` is
// marked ephemeral and stops with its last live lease, so suites in several processes can share it.
let leases = 0;
const ephemeral = (p: Paths) => join(p.dir, 'ephemeral');

/** Leases on the containerd `pid` whose process still runs; drops the others. */
function liveLeases(p: Paths, pid: number): string[] {
  const dir = join(p.dir, 'leases');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => {
    const live =
      cmdline(f.split('.')[0] ?? '').length > 0 && readFileSync(join(dir, f), 'utf8') === String(pid);
    if (!live) rmSync(join(dir, f), { force: true });
    return live;
  });
}

function lease(p: Paths, pid: number, reused: boolean, opts: LabOptions): Lab {
  const file = join(p.dir, 'leases', `${process.pid}.${++leases}`);
  mkdirSync(join(p.dir, 'leases'), { recursive: true });
  writeFileSync(file, String(pid));
  let released = false;
  return {
    endpoint: `unix://${p.socket}`,
    socket: p.socket,
    root: join(p.dir, 'root'),
    pid,
    images: { ...LAB_IMAGES },
    reused,
    async stop() {
      if (released) return;
      released = true;
      rmSync(file, { force: true });
      await locked(p, async () => {
        if (!existsSync(ephemeral(p)) || runningPid(p) !== pid || liveLeases(p, pid).length > 0) return;
        await teardown(p, opts.log ?? defaultLog);
      });
    },
  };
}

/** Starts the lab, or finds it running, with its images imported. */
export function startLab(opts: LabOptions = {}): Promise<Lab> {
  const p = paths(opts);
  const log = opts.log ?? defaultLog;
  if (process.platform !== 'linux') return Promise.reject(new Error('lab: containerd needs Linux'));
  return locked(p, async () => {
    const started = performance.now();
    let pid = runningPid(p);
    if (pid && (await answers(p))) {
      await importImages(p, await buildImages(p, log), log);
      if (opts.keep) rmSync(ephemeral(p), { force: true });
      log(`reusing containerd ${pid} (${seconds(started)})`);
      return lease(p, pid, true, opts);
    }
    if (pid) {
      log(`containerd ${pid} does not answer; restarting it`);
      await killAndWait(pid, 5_000);
    }
    if (process.getuid?.() !== 0) throw new Error('lab: containerd needs root');
    await ensurePackages(log);
    const tars = await buildImages(p, log);
    pid = await startContainerd(p, log);
    if (opts.keep) rmSync(ephemeral(p), { force: true });
    else writeFileSync(ephemeral(p), '');
    try {
      // Pods left by a lab that was not stopped (its shims still run) must not leak into this one.
      const leftovers = await removeAllPods(p);
      if (leftovers > 0) log(`removed ${leftovers} pod(s) left by an earlier run`);
      await importImages(p, tars, log);
    } catch (e) {
      await teardown(p, log).catch(() => {});
      throw e;
    }
    log(`lab up (${seconds(started)})`);
    return lease(p, pid, false, opts);
  });
}

async function answers(p: Paths): Promise<boolean> {
  const client = new CriClient({ endpoint: `unix://${p.socket}`, timeoutMs: 3_000 });
  const ok = await client.version().then(
    () => true,
    () => false,
  );
  client.close();
  return ok;
}

/** Removes the lab's pods, stops its containerd by PID and deletes its state (not the image cache). */
export function stopLab(opts: LabOptions = {}): Promise<void> {
  const p = paths(opts);
  return locked(p, () => teardown(p, opts.log ?? defaultLog));
}

async function teardown(p: Paths, log: (l: string) => void): Promise<void> {
  let pid = runningPid(p);
  // Shims without their containerd: start it again so that it stops their containers properly.
  if (!pid && shimPids(p).length > 0 && existsSync(p.config))
    pid = await startContainerd(p, log).catch(() => undefined);
  if (pid) {
    const pods = await removeAllPods(p).catch(() => 0);
    await killAndWait(pid, 10_000);
    log(`stopped containerd ${pid}${pods ? ` after removing ${pods} pod(s)` : ''}`);
  }
  for (const shim of shimPids(p)) process.kill(shim, 'SIGKILL');
  unmountAll(p);
  spawnSync('ip', ['link', 'del', labNetwork(p.dir).bridge], { env, stdio: 'ignore' });
  for (const f of [
    'root',
    'state',
    'runc',
    'cni',
    'opt',
    'leases',
    'ephemeral',
    'build-pause',
    'build-app',
  ]) {
    rmSync(join(p.dir, f), { recursive: true, force: true });
  }
  for (const f of [p.config, p.pidfile, p.logfile, p.socket, `${p.socket}.ttrpc`]) rmSync(f, { force: true });
  if (!p.socket.startsWith(`${p.dir}/`)) rmSync(resolve(p.socket, '..'), { recursive: true, force: true });
}

/**
 * Simulates a power cut of the running lab: containerd, its shims and every container are killed
 * with SIGKILL, the state that lives on tmpfs on a real node (containerd's state dir, runc's root,
 * the mounts) is dropped, and containerd starts again on the same root, so the runtime still
 * lists the pods' sandboxes (NotReady) and containers (Exited), as after a reboot. With `wipe`
 * the root goes too (a node whose runtime storage was reset): the runtime comes back empty, with
 * the lab images imported again. Handles taken before are void: stop the lab with stopLab().
 */
export function powerCut(
  opts: LabOptions & { wipe?: boolean } = {},
): Promise<{ pid: number; endpoint: string }> {
  const p = paths(opts);
  const log = opts.log ?? defaultLog;
  return locked(p, async () => {
    const pid = runningPid(p);
    if (!pid) throw new Error(`lab: no containerd running in ${p.dir}`);
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 100 && cmdline(pid).length > 0; i++) await sleep(20);
    for (const shim of shimPids(p)) process.kill(shim, 'SIGKILL');
    const runcRoot = join(p.dir, 'runc', 'k8s.io');
    const ids = existsSync(runcRoot) ? readdirSync(runcRoot) : [];
    // runc kills what is left in each container's cgroup and removes the cgroup, as a reboot would.
    await Promise.all(
      ids.map((id) => run('runc', ['--root', runcRoot, 'delete', '--force', id]).catch(() => {})),
    );
    unmountAll(p);
    for (const d of opts.wipe ? ['state', 'runc', 'root'] : ['state', 'runc'])
      rmSync(join(p.dir, d), { recursive: true, force: true });
    const next = await startContainerd(p, log);
    if (opts.wipe) await importImages(p, await buildImages(p, log), log);
    log(`power cut: containerd ${pid} and ${ids.length} container(s) killed, containerd ${next} started`);
    return { pid: next, endpoint: `unix://${p.socket}` };
  });
}

/** The running lab's PID and endpoint, or undefined. */
export function labStatus(opts: LabOptions = {}): { pid: number; endpoint: string; dir: string } | undefined {
  const p = paths(opts);
  const pid = runningPid(p);
  return pid ? { pid, endpoint: `unix://${p.socket}`, dir: p.dir } : undefined;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const cmd = process.argv[2];
  const main = async () => {
    if (cmd === 'up') {
      const lab = await startLab({ keep: true });
      process.stdout.write(`${lab.endpoint}\n`);
    } else if (cmd === 'down') {
      await stopLab();
    } else if (cmd === 'pick') {
      // The runtime `npm start` uses: $OUTPOST_RUNTIME_ENDPOINT, the system containerd when it
      // answers, else this lab (started and kept). Prints the endpoint.
      const system = 'unix:///run/containerd/containerd.sock';
      let endpoint = process.env.OUTPOST_RUNTIME_ENDPOINT;
      if (!endpoint) {
        const client = new CriClient({ endpoint: system, timeoutMs: 3_000 });
        const ok =
          existsSync('/run/containerd/containerd.sock') &&
          (await client.version().then(
            () => true,
            () => false,
          ));
        client.close();
        endpoint = ok ? system : (await startLab({ keep: true })).endpoint;
      }
      process.stdout.write(`${endpoint}\n`);
    } else if (cmd === 'status') {
      const s = labStatus();
      process.stdout.write(
        s ? `running pid ${s.pid} endpoint ${s.endpoint} dir ${s.dir}\n` : 'not running\n',
      );
      process.exitCode = s ? 0 : 1;
    } else {
      process.stderr.write('usage: tsx scripts/lab.ts up|down|status|pick\n');
      process.exitCode = 2;
    }
  };
  main().catch((e: Error) => {
    process.stderr.write(`${e.message}\n`);
    process.exit(1);
  });
}
