// Every shell block of README.md and docs/*.md tagged `runnable` is executed as docs/writing-docs.md
// describes: the built agent on the sample manifests (examples/manifests) and the containerd lab, on
// its own port (every 127.0.0.1:10550 and localhost:10550 rewritten to it, every ./data/ to its
// data directory, where the admin kubeconfig is), the reference mapper
// beside it, `outpost` (the bundle, linked as `npm link` links it) and the real kubectl on PATH,
// `bash -o pipefail` from the project root, each command's exit code and expectations checked.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import type { Device } from '#lib/kube/devices.ts';
import { commands, type DocCommand, projectBlocks } from '../helpers/doc-blocks.ts';
import { labOrSkip, waitFor } from '../helpers/lab.ts';
import { ensureBundle, type OutpostProcess, spawnOutpost } from '../helpers/outpost-process.ts';

const root = join(import.meta.dirname, '../..');
const COMMAND_TIMEOUT_MS = 60_000;

interface Pod {
  metadata: { name: string; namespace: string; uid: string };
  status?: {
    phase?: string;
    containerStatuses?: {
      name: string;
      ready?: boolean;
      containerID?: string;
      state?: { running?: unknown };
    }[];
  };
}

const RUNNING = ['default/web', 'sensors/sensor-reader', 'sensors/uploader'];

/**
 * The sample pods are in their steady state, in the runtime and in what the API serves: every
 * container of the long-running pods runs (its newest instance, the one the status names) and is
 * ready, `setup-once` has completed. A restart in one command never races the next.
 */
async function settled(pods: Pod[], cri: CriClient): Promise<boolean> {
  const byName = new Map(pods.map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p]));
  if (byName.get('default/setup-once')?.status?.phase !== 'Succeeded') return false;
  for (const key of RUNNING) {
    const pod = byName.get(key);
    const statuses = pod?.status?.containerStatuses ?? [];
    if (!pod || statuses.length === 0) return false;
    const instances = await cri.listContainers({
      labelSelector: { 'io.kubernetes.pod.uid': pod.metadata.uid },
    });
    for (const s of statuses) {
      const newest = instances
        .filter((c) => c.metadata?.name === s.name)
        .sort((a, b) => (b.metadata?.attempt ?? 0) - (a.metadata?.attempt ?? 0))[0];
      if (!s.ready || !s.state?.running || newest?.state !== 'CONTAINER_RUNNING') return false;
      if (s.containerID !== `containerd://${newest.id}`) return false;
    }
  }
  return true;
}

/** Runs one command line under bash; resolves with its exit code and its output (stdout + stderr). */
function sh(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-o', 'pipefail', '-o', 'nounset', '-c', script], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group, so a timeout kills the whole pipeline
    });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    const timer = setTimeout(() => {
      output += `\n[killed after ${COMMAND_TIMEOUT_MS / 1000} s]`;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {}
    }, COMMAND_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const lab = await labOrSkip('test/e2e/docs.test.ts');
if (lab) {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-docs-'));
  const dataDir = join(dir, 'data');
  const bin = join(dir, 'bin');
  const home = join(dir, 'home');
  for (const d of [dataDir, bin, home, join(dir, 'tmp')]) mkdirSync(d, { recursive: true });
  // What `npm link` makes: `outpost` is a link to the bundle (its shebang finds this node first).
  symlinkSync(ensureBundle(), join(bin, 'outpost'));
  const nodeName = `docs-${Math.random().toString(36).slice(2, 7)}`;
  const cri = new CriClient({ endpoint: lab.endpoint });
  let agent: OutpostProcess | undefined;
  let mapper: ReturnType<typeof spawn> | undefined;
  let mapperLog = '';
  let uids: string[] = [];

  const pods = async (): Promise<Pod[]> =>
    agent ? ((await fetch(`${agent.url}/api/v1/pods`).then((r) => r.json())) as { items: Pod[] }).items : [];
  const device = async (): Promise<Device | undefined> =>
    agent
      ? ((await fetch(
          `${agent.url}/apis/devices.kubeedge.io/v1beta1/namespaces/default/devices/thermometer`,
        ).then((r) => r.json())) as Device)
      : undefined;

  // The commands' environment: nothing of the caller's Outpost or kubectl settings, a fresh HOME
  // (kubectl's discovery cache), OUTPOST_SERVER at the agent.
  const env = (url: string): NodeJS.ProcessEnv => {
    const e: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env))
      if (!k.startsWith('OUTPOST_') && k !== 'KUBECONFIG' && k !== 'EDITOR' && k !== 'KUBE_EDITOR') e[k] = v;
    return {
      ...e,
      PATH: [bin, dirname(process.execPath), process.env.PATH ?? ''].join(delimiter),
      HOME: home,
      TMPDIR: join(dir, 'tmp'),
      OUTPOST_SERVER: url,
      // The reader's ./data: where the outpost CLI finds the admin kubeconfig by itself.
      OUTPOST_DATA_DIR: dataDir,
    };
  };

  test.before(async () => {
    agent = await spawnOutpost({
      dataDir,
      runtimeEndpoint: lab.endpoint,
      nodeName,
      manifests: join(root, 'examples/manifests'),
    });
    // The reference mapper, as docs/devices.md's terminal 2 runs it (the bundle, on the agent's DMI socket).
    mapper = spawn(
      process.execPath,
      [
        ensureBundle(),
        'mapper',
        'virtual',
        '--socket',
        join(dir, 'virtual-mapper.sock'),
        '--outpost-dmi',
        join(dataDir, 'dmi.sock'),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    mapper.stderr!.on('data', (d) => {
      mapperLog += d;
    });
    await agent.ready(120_000);
  });

  // Before each command, as a reader typing it would find them: the samples settled, the device
  // reported by its mapper.
  const steady = async () => {
    const ok = await waitFor(
      async () => (await settled(await pods(), cri)) && (await device())?.status?.state === 'ok',
      120_000,
      250,
    );
    assert.ok(ok, `the samples did not settle:\n${JSON.stringify(await pods())}\nmapper:\n${mapperLog}`);
    uids = (await pods()).map((p) => p.metadata.uid);
  };

  const blocks = projectBlocks(root).filter((b) => b.tag === 'runnable');
  for (const block of blocks) {
    test(`${block.file}:${block.line}`, async () => {
      const url = agent!.url;
      const address = new URL(url).host;
      const rewrite = (s: string) =>
        s
          .replaceAll('127.0.0.1:10550', address)
          .replaceAll('localhost:10550', address)
          .replaceAll('./data/', `${dataDir}/`);
      const exports: string[] = [];
      const failures: string[] = [];
      for (const cmd of commands(block)) {
        if (cmd.skip) continue;
        const text = rewrite(cmd.text);
        if (/^export\s/.test(text)) {
          exports.push(text);
          continue;
        }
        await steady();
        const { code, output } = await sh([...exports, text].join('\n'), env(url));
        const problems = check(cmd, code, output);
        if (problems.length > 0)
          failures.push(
            `${block.file}:${cmd.line}: ${cmd.text}\n  ${problems.join('\n  ')}\n  output:\n${indent(output)}`,
          );
      }
      assert.ok(failures.length === 0, `\n${failures.join('\n')}`);
    });
  }

  test.after(async () => {
    if (mapper && mapper.exitCode === null) {
      const gone = new Promise((r) => mapper!.once('exit', r));
      mapper.kill('SIGTERM');
      await gone;
    }
    if (agent) {
      uids = (await pods().catch(() => [])).map((p) => p.metadata.uid).concat(uids);
      await agent.kill9();
    }
    // The sample pods' sandboxes (and their containers) go; other suites' pods are left alone.
    for (const uid of new Set(uids))
      for (const s of await cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': uid } }))
        await cri.removePodSandbox(s.id).catch(() => {});
    cri.close();
    rmSync(dir, { recursive: true, force: true });
    await lab.stop();
  });
}

/** What is wrong with a command's result, by its expectation; empty when it is as documented. */
function check(cmd: DocCommand, code: number | null, output: string): string[] {
  const problems: string[] = [];
  if (code !== cmd.exit) problems.push(`exit ${code}, documented ${cmd.exit}`);
  for (const part of cmd.contains) if (!output.includes(part)) problems.push(`no ${JSON.stringify(part)}`);
  return problems;
}

const indent = (s: string) =>
  s
    .trimEnd()
    .split('\n')
    .slice(0, 40)
    .map((l) => `    | ${l}`)
    .join('\n');

test.run();
