// Outpost as production runs it: `node dist/outpost.cjs serve ...` in its own process, so a test
// can kill -9 it and start it again on the same data directory.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { ExitCode } from '#lib/supervisor/exit-codes.ts';
import { freePort } from '../../scripts/free-port.ts';
import { adminToken, registerAdmin } from './agent.ts';

const root = join(import.meta.dirname, '../..');
const bundle = join(root, 'dist/outpost.cjs');
const esm = join(root, 'dist/outpost.mjs');

/** Newest modification time of the files a build reads. */
function newestSource(): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  for (const d of ['bin', 'lib', 'db', 'routes', 'proto']) if (existsSync(join(root, d))) walk(join(root, d));
  for (const f of ['package.json', 'scripts/build.mjs'])
    newest = Math.max(newest, statSync(join(root, f)).mtimeMs);
  return newest;
}

/**
 * Builds the bundle when it is missing or older than its sources; returns the path of Node's entry,
 * dist/outpost.cjs (what the unit, `outpost supervise` and the npm command run).
 */
export function ensureBundle(): string {
  if (existsSync(bundle) && statSync(bundle).mtimeMs >= newestSource()) return bundle;
  const r = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm run build failed:\n${r.stdout}${r.stderr}`);
  return bundle;
}

/** The ES module entry, dist/outpost.mjs (what Deno and Bun run, and units written before outpost.cjs), built if stale. */
export function ensureEsmEntry(): string {
  ensureBundle();
  return esm;
}

/**
 * `start(port)` on a free loopback port, and again on another one when it fails with the exit code
 * of a listen failure (`err.exitCode`, ExitCode.ListenFailed): the port freePort() found free was
 * taken by another process before the child bound it. At most `tries` ports; each retry is said on
 * stderr.
 */
export async function onFreePort<T>(
  what: string,
  start: (port: number) => Promise<T>,
  tries = 5,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await start(port);
    } catch (e) {
      if ((e as { exitCode?: unknown }).exitCode !== ExitCode.ListenFailed || attempt >= tries) throw e;
      process.stderr.write(
        `${what}: could not listen on port ${port} (taken since it was found free), starting again on another (${attempt}/${tries - 1})\n`,
      );
    }
  }
}

export interface OutpostProcess {
  url: string;
  pid: number;
  /** The data directory's admin token and `authorization: Bearer` header, for calls that write. */
  token: string;
  admin: { authorization: string };
  /** Everything it logged so far (JSON lines on stderr). */
  logs(): string;
  /** Resolves once GET /readyz answers 200: every module runs, every pod had its first sync. */
  ready(timeoutMs?: number): Promise<void>;
  /** SIGKILL, then waits for the exit. */
  kill9(): Promise<void>;
  /** SIGTERM (a graceful shutdown), then waits for the exit; resolves with the exit code. */
  term(): Promise<number | null>;
  /** POSTs `body` as JSON to `path` (`/api/v1/...`) as the admin. */
  post(path: string, body: unknown): Promise<Response>;
}

export interface OutpostOptions {
  dataDir: string;
  runtimeEndpoint: string;
  nodeName: string;
  manifests?: string;
  logLevel?: string;
  /** Further serve flags. */
  args?: string[];
  /** The entry to run (default: dist/outpost.cjs, built if stale). */
  bundle?: string;
  /** What runs it (default: this node), e.g. `['qemu-aarch64-static', '-L', SYSROOT, NODE]`. */
  node?: string[];
  /** How long to wait for /livez (default 30 s; emulated boards need more). */
  startTimeoutMs?: number;
}

/**
 * Starts the bundle as a child process on a free port (another one if that was taken before the
 * agent bound it: onFreePort) and resolves once its API answers. With OUTPOST_TEST_LOGS set to a
 * directory, each process's log (at debug level) is also written there (outpost-<pid>.log).
 */
export function spawnOutpost(o: OutpostOptions): Promise<OutpostProcess> {
  return onFreePort('outpost', (port) => spawnOn(o, port));
}

async function spawnOn(o: OutpostOptions, port: number): Promise<OutpostProcess> {
  const url = `http://127.0.0.1:${port}`;
  const [cmd = process.execPath, ...prefix] = o.node ?? [];
  const args = [
    ...prefix,
    o.bundle ?? ensureBundle(),
    'serve',
    '--listen',
    `127.0.0.1:${port}`,
    '--data-dir',
    o.dataDir,
  ];
  args.push('--runtime-endpoint', o.runtimeEndpoint, '--node-name', o.nodeName);
  if (o.manifests) args.push('--manifests', o.manifests);
  if (o.args) args.push(...o.args);
  args.push('--log-level', o.logLevel ?? (process.env.OUTPOST_TEST_LOGS ? 'debug' : 'info'));
  const child: ChildProcess = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let logs = '';
  const keep = process.env.OUTPOST_TEST_LOGS;
  if (keep) mkdirSync(keep, { recursive: true });
  child.stderr!.on('data', (d) => {
    logs += d;
    if (keep) appendFileSync(join(keep, `outpost-${child.pid}.log`), d);
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  // Its exit code goes with the error: onFreePort starts again on another port after a listen failure.
  const died = () =>
    Object.assign(new Error(`outpost exited (${child.exitCode ?? child.signalCode}):\n${logs}`), {
      exitCode: child.exitCode,
    });
  const poll = async (path: string, timeoutMs: number) => {
    for (const end = Date.now() + timeoutMs; ; await new Promise((r) => setTimeout(r, 20))) {
      if (gone()) throw died();
      // Each request bounded: a process that took the port and never answers must not hang the poll.
      const ok = await fetch(url + path, { signal: AbortSignal.timeout(5_000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return;
      if (Date.now() > end) throw new Error(`outpost: ${path} not ok within ${timeoutMs} ms:\n${logs}`);
    }
  };
  let token: string;
  try {
    await poll('/livez', o.startTimeoutMs ?? 30_000);
    // The admin kubeconfig is rewritten for this port just after the API listens.
    for (const end = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 20))) {
      const kubeconfig = join(o.dataDir, 'auth', 'admin.kubeconfig');
      if (existsSync(kubeconfig) && readFileSync(kubeconfig, 'utf8').includes(`:${port}\n`)) break;
      // Another process answered /livez on the port: this one could not bind it.
      if (gone()) throw died();
      if (Date.now() > end) throw new Error(`outpost: no admin kubeconfig for port ${port}:\n${logs}`);
    }
    token = adminToken(o.dataDir);
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
  const unregister = registerAdmin(url, o.dataDir);
  exited.then(unregister);
  return {
    url,
    pid: child.pid!,
    token,
    admin: { authorization: `Bearer ${token}` },
    logs: () => logs,
    ready: (timeoutMs = 60_000) => poll('/readyz', timeoutMs),
    async kill9() {
      if (!gone()) child.kill('SIGKILL');
      await exited;
    },
    term() {
      if (!gone()) child.kill('SIGTERM');
      return exited;
    },
    post: (path, body) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
  };
}

/**
 * SIGTERM to an agent while a pod pass waits on the runtime (a stop through a long grace period,
 * an image pull): it exits 0 having cancelled the pass, without the supervisor abandoning the pods
 * module after its settle timeout and without failing the pod.
 */
export async function termCancellingPass(p: OutpostProcess): Promise<void> {
  const code = await p.term();
  const logs = p.logs();
  assert.is(code, 0, logs);
  assert.not.match(logs, /module ignored abort/);
  assert.match(logs, /pod sync cancelled: the agent is stopping/);
  assert.not.match(logs, /pod sync failed/);
}
