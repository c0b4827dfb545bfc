import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Agent, type AgentOptions, startAgent } from '#lib/agent.ts';
import { systemClock } from '#lib/clock.ts';
import { resolveServeConfig } from '#lib/config.ts';
import { type Logger, silentLogger } from '#lib/log.ts';

export interface TestAgent extends Agent {
  dataDir: string;
  stop(): Promise<void>;
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
    /** Runtime discovery settings (candidates, unreachable grace period). */
    agent?: Pick<AgentOptions, 'runtimeCandidates' | 'runtimeUnreachableGraceMs'>;
  } = {},
): Promise<TestAgent> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'outpost-test-'));
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
  const agent = await startAgent(config, opts.log ?? silentLogger, {
    clock,
    runPods: opts.runtimeEndpoint !== undefined,
    ...opts.agent,
  });
  return {
    url: agent.url,
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
    close: () => agent.close(),
    dataDir,
    async stop() {
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

/** The real kubectl against `server`, with a fresh HOME so no cached discovery leaks between runs. */
export function kubectl(server: string, args: string[], opts: Parameters<typeof run>[2] = {}): Promise<Run> {
  // The caller's env (e.g. KUBE_EDITOR for `kubectl edit`) under the fresh HOME.
  const env = {
    ...(opts.env ?? process.env),
    HOME: kubectlHome,
    KUBECONFIG: join(kubectlHome, 'none'),
    TMPDIR: join(kubectlHome, 'tmp'),
  };
  return run(
    'kubectl',
    [`--server=${server}`, `--cache-dir=${join(kubectlHome, 'cache', String(Date.now()))}`, ...args],
    { ...opts, env },
  );
}

/** The `outpost` CLI from source (tsx), as a user would run it. */
export function outpost(args: string[], opts: Parameters<typeof run>[2] = {}): Promise<Run> {
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
