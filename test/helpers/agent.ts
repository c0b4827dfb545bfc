import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Agent, type AgentOptions, startAgent } from '#lib/agent.ts';
import { adminKubeconfigPath } from '#lib/auth/admin.ts';
import { systemClock } from '#lib/clock.ts';
import { resolveServeConfig } from '#lib/config.ts';
import { type Logger, silentLogger } from '#lib/log.ts';

export interface TestAgent extends Agent {
  dataDir: string;
  /** The data directory's admin token and kubeconfig (https, with its CA). */
  token: string;
  kubeconfig: string;
  /** `authorization: Bearer <admin token>`, for fetch calls that write. */
  admin: { authorization: string };
  stop(): Promise<void>;
}

/** The admin credential of each Outpost a test started, by `host:port`. */
const admins = new Map<string, { dataDir: string; kubeconfig: string }>();
const hostPort = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
};

/**
 * Remembers the admin credential of an Outpost a test started, so kubectl() and outpost() against
 * its URL go as its admin (kubectl over https with the admin kubeconfig, as a user would).
 */
export function registerAdmin(url: string, dataDir: string): () => void {
  const key = hostPort(url);
  admins.set(key, { dataDir, kubeconfig: adminKubeconfigPath(dataDir) });
  return () => admins.delete(key);
}

/** `authorization: Bearer <admin token>` for an Outpost a test started at `url`; {} for any other server. */
export function adminHeaders(url: string): Record<string, string> {
  const admin = admins.get(hostPort(url));
  return admin ? { authorization: `Bearer ${adminToken(admin.dataDir)}` } : {};
}

/** The admin token in a data directory's admin kubeconfig. */
export function adminToken(dataDir: string): string {
  const m = /token: (\S+)/.exec(readFileSync(adminKubeconfigPath(dataDir), 'utf8'));
  if (!m) throw new Error(`no admin token in ${adminKubeconfigPath(dataDir)}`);
  return m[1]!;
}

/** An in-process agent on a free loopback port with its own temporary data directory. */
export async function startTestAgent(
  opts: {
    manifests?: string;
    nodeName?: string;
    dataDir?: string;
    now?: () => number;
    runtimeEndpoint?: string;
    /** Further serve flags (tokensFile, tlsCert, listen, ...). */
    flags?: Record<string, unknown>;
    /** The agent's logger (default: silent). */
    log?: Logger;
    /** Runtime discovery settings (candidates, unreachable grace period) and the start's warm hook. */
    agent?: Pick<
      AgentOptions,
      'runtimeCandidates' | 'runtimeUnreachableGraceMs' | 'onWarm' | 'warmWithoutRequestMs'
    >;
  } = {},
): Promise<TestAgent> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'outpost-test-'));
  // A start that fails (a refused flag, say) leaves no temporary data directory behind.
  let agent: Awaited<ReturnType<typeof startAgent>>;
  try {
    const config = resolveServeConfig(
      {
        listen: '127.0.0.1:0',
        dataDir,
        manifests: opts.manifests,
        nodeName: opts.nodeName ?? 'edge-1',
        logLevel: 'silent',
        runtimeEndpoint: opts.runtimeEndpoint,
        // The node API (with --cloud) on a free port, never the shared 10250.
        kubeletPort: 0,
        ...opts.flags,
      },
      {},
    );
    const clock = opts.now ? { ...systemClock, now: opts.now } : systemClock;
    agent = await startAgent(config, opts.log ?? silentLogger, {
      clock,
      runPods: opts.runtimeEndpoint !== undefined,
      ...opts.agent,
    });
  } catch (e) {
    if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  const unregister = registerAdmin(agent.url, dataDir);
  const token = adminToken(dataDir);
  return {
    url: agent.url,
    secureUrl: agent.secureUrl,
    token,
    kubeconfig: adminKubeconfigPath(dataDir),
    admin: { authorization: `Bearer ${token}` },
    store: agent.store,
    metabase: agent.metabase,
    supervisor: agent.supervisor,
    get pods() {
      return agent.pods;
    },
    cloud: agent.cloud,
    get cloudNode() {
      return agent.cloudNode;
    },
    close: () => {
      unregister();
      return agent.close();
    },
    dataDir,
    async stop() {
      unregister();
      await agent.close();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion (or until `untilStdout` matches, then SIGTERM) and collects its output. */
export function run(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; untilStdout?: RegExp; timeoutMs?: number; input?: string } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    // A bound against a hung child, not a timing assertion: generous, since CI machines are loaded.
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.stdout.on('data', (d) => {
      stdout += d;
      if (opts.untilStdout?.test(stdout)) child.kill('SIGTERM');
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

const kubectlHome = mkdtempSync(join(tmpdir(), 'outpost-kubectl-home-'));
// kubectl's own temporary files (`kubectl edit` keeps its YAML when an edit fails) stay in here.
mkdirSync(join(kubectlHome, 'tmp'));
process.once('exit', () => rmSync(kubectlHome, { recursive: true, force: true }));

/**
 * The real kubectl against `server`, with a fresh HOME so no cached discovery leaks between runs.
 * Against an Outpost a test started (startTestAgent, spawnOutpost), it goes as that Outpost's
 * admin: its admin kubeconfig, over https, unless the arguments name other credentials or
 * `anonymous` is set (plain http, no credentials).
 */
export function kubectl(
  server: string,
  args: string[],
  opts: Parameters<typeof run>[2] & { anonymous?: boolean } = {},
): Promise<Run> {
  // The caller's env (e.g. KUBE_EDITOR for `kubectl edit`) under the fresh HOME.
  const env = {
    ...(opts.env ?? process.env),
    HOME: kubectlHome,
    KUBECONFIG: join(kubectlHome, 'none'),
    TMPDIR: join(kubectlHome, 'tmp'),
  };
  const admin = admins.get(hostPort(server));
  const credentials = args.some((a) => /^--(token|kubeconfig|client-certificate|username)(=|$)/.test(a));
  const target =
    admin && !credentials && !opts.anonymous ? `--kubeconfig=${admin.kubeconfig}` : `--server=${server}`;
  return run('kubectl', [target, `--cache-dir=${join(kubectlHome, 'cache', String(Date.now()))}`, ...args], {
    ...opts,
    env,
  });
}

/**
 * The `outpost` CLI from source (tsx), as a user would run it. Against an Outpost a test started
 * (`-s URL`), OUTPOST_DATA_DIR names its data directory, so the CLI finds the admin kubeconfig by
 * itself, as on the node.
 */
export function outpost(args: string[], opts: Parameters<typeof run>[2] = {}): Promise<Run> {
  const i = args.findIndex((a) => a === '-s' || a === '--server');
  const server = i >= 0 ? args[i + 1] : args.find((a) => a.startsWith('--server='))?.slice(9);
  const admin = server ? admins.get(hostPort(server)) : undefined;
  const env = opts.env ?? process.env;
  if (admin && env.OUTPOST_DATA_DIR === undefined)
    opts = { ...opts, env: { ...env, OUTPOST_DATA_DIR: admin.dataDir } };
  return run(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, '../../bin/outpost.ts'), ...args],
    opts,
  );
}

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string | undefined;
  fields: Record<string, unknown>;
}

/** A logger that keeps every line (with its child bindings) in `lines`, for tests that read logs. */
export function captureLogger(lines: LogLine[], bindings: Record<string, unknown> = {}): Logger {
  const at =
    (level: LogLine['level']) =>
    (obj: object, msg?: string): void => {
      lines.push({ level, msg, fields: { ...bindings, ...obj } });
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (b) => captureLogger(lines, { ...bindings, ...b }),
  };
}
