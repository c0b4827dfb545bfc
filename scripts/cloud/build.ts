// Builds kube-apiserver, kube-controller-manager and kube-scheduler 1.20.2 (and on request
// kubemark) from Debian's `kubernetes` source package, once, into a cache outside the repository
// (default ~/.cache/outpost/kubernetes-1.20.2, or $OUTPOST_KUBE_CACHE). The recipe and why the
// vendored reflect2 is replaced: ../shared/reference/kube-apiserver.md.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const KUBE_VERSION = 'v1.20.2';
export const CONTROL_PLANE = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;
const REFLECT2 = '/usr/share/gocode/src/github.com/modern-go/reflect2';

/** The cache directory; binaries land in its `bin/`. */
export const kubeCache = (): string =>
  process.env.OUTPOST_KUBE_CACHE ??
  join(homedir(), '.cache', 'outpost', `kubernetes-${KUBE_VERSION.slice(1)}`);

/** The path of a built binary, or undefined when it is not built yet. */
export function builtBinary(name: string, cache = kubeCache()): string | undefined {
  const p = join(cache, 'bin', name);
  return existsSync(p) ? p : undefined;
}

/** Whether the three control-plane binaries are in the cache. */
export const controlPlaneBuilt = (cache = kubeCache()): boolean =>
  CONTROL_PLANE.every((b) => builtBinary(b, cache));

function runStreaming(cmd: string, args: string[], cwd: string, log: (l: string) => void, env = process.env) {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail: string[] = [];
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) {
        if (!line.trim()) continue;
        tail = [...tail.slice(-30), line];
        // make's progress lines ("+++ [...] Building go targets") and the targets under them.
        if (/^\+\+\+|^ {4}\S|error|Error/.test(line)) log(line.trim());
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}:\n${tail.join('\n')}`)),
    );
  });
}

const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

/** What is missing on this machine to build, or [] when a build can start. */
export function buildPrerequisites(): string[] {
  const missing: string[] = [];
  if (!has('go')) missing.push('golang-go (go)');
  if (!has('dpkg-source')) missing.push('dpkg-dev (dpkg-source)');
  if (!has('make')) missing.push('make');
  if (!existsSync(REFLECT2)) missing.push('golang-github-modern-go-reflect2-dev');
  return missing;
}

export interface BuildOptions {
  cache?: string;
  kubemark?: boolean;
  log?: (line: string) => void;
}

/** Builds what is not in the cache yet; a no-op once built. Throws with the reason when impossible. */
export async function buildControlPlane(o: BuildOptions = {}): Promise<string> {
  const cache = o.cache ?? kubeCache();
  const log = o.log ?? ((l: string) => process.stderr.write(`lab:cloud: ${l}\n`));
  const targets = [...CONTROL_PLANE, ...(o.kubemark ? ['kubemark'] : [])];
  const todo = targets.filter((t) => !builtBinary(t, cache));
  if (todo.length === 0) {
    log(`cached in ${join(cache, 'bin')}`);
    return join(cache, 'bin');
  }
  const missing = buildPrerequisites();
  if (missing.length)
    throw new Error(
      `cannot build Kubernetes ${KUBE_VERSION}: missing ${missing.join(', ')} (apt-get install them)`,
    );
  mkdirSync(cache, { recursive: true });
  const started = Date.now();
  const src = join(cache, 'src');
  if (!existsSync(join(src, '.outpost-prepared'))) {
    if (!readdirSync(cache).some((f) => f.endsWith('.dsc'))) {
      log('apt-get source kubernetes (Debian 12: Kubernetes 1.20.2, vendored modules)');
      await runStreaming('apt-get', ['source', '--download-only', 'kubernetes'], cache, log).catch(
        (e: Error) => {
          throw new Error(
            `${e.message}\napt-get source needs deb-src entries: add "deb-src" to Types: in /etc/apt/sources.list.d/debian.sources, then apt-get update`,
          );
        },
      );
    }
    const dsc = readdirSync(cache).find((f) => f.endsWith('.dsc'));
    if (!dsc) throw new Error(`no kubernetes .dsc in ${cache}`);
    rmSync(src, { recursive: true, force: true });
    log(`unpacking ${dsc}`);
    await runStreaming('dpkg-source', ['-x', dsc, 'src'], cache, log);
    // reflect2 1.0.1 crashes on Go >= 1.18 (SIGSEGV encoding maps); Debian's 1.0.2 is the fix.
    // Remove first: a leftover go_above_17.go would redeclare resolveTypeOff.
    const vendored = join(src, 'vendor/github.com/modern-go/reflect2');
    rmSync(vendored, { recursive: true, force: true });
    await runStreaming('cp', ['-r', REFLECT2, vendored], cache, log);
    mkdirSync(join(src, '.go/src/k8s.io'), { recursive: true });
    symlinkSync('../../..', join(src, '.go/src/k8s.io/kubernetes'));
    await runStreaming('touch', ['.outpost-prepared'], src, log);
  }
  log(`building ${todo.join(', ')} (about 5-15 minutes on two cores; progress below)`);
  await runStreaming('make', [`WHAT=${todo.map((t) => `cmd/${t}`).join(' ')}`], src, log, {
    ...process.env,
    GOPATH: join(src, '.go'),
    CGO_ENABLED: '0',
    KUBE_GIT_VERSION: KUBE_VERSION,
    GO111MODULE: 'off',
  });
  mkdirSync(join(cache, 'bin'), { recursive: true });
  for (const t of todo) {
    const tmp = join(cache, 'bin', `.${t}.tmp`);
    copyFileSync(join(src, '_output/bin', t), tmp);
    renameSync(tmp, join(cache, 'bin', t));
  }
  log(
    `built ${todo.join(', ')} in ${Math.round((Date.now() - started) / 1000)} s into ${join(cache, 'bin')}`,
  );
  return join(cache, 'bin');
}
