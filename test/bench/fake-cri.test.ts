// The fake CRI runtime of the scale bench (bench/fake-cri), through Outpost's own CriClient on a
// real unix socket: what runs at once, what is found, and the paths it refuses to serve on.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import type { PodSandboxConfig } from '#lib/cri/types.ts';
import { socketPath, startFakeCri } from '../../bench/fake-cri/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'fcri-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const sandboxConfig = (name: string, hostNetwork = false): PodSandboxConfig => ({
  metadata: { name, uid: `uid-${name}`, namespace: 'ns' },
  logDirectory: join(dir, 'logs', name),
  labels: { app: name },
  linux: { securityContext: { namespaceOptions: { network: hostNetwork ? 'NODE' : 'POD' } } },
});

test('socketPath takes unix:// URLs and absolute paths only', () => {
  assert.is(socketPath('unix:///run/x.sock'), '/run/x.sock');
  assert.is(socketPath('/run/x.sock'), '/run/x.sock');
  assert.throws(() => socketPath('tcp://127.0.0.1:1'), /unix:\/\/\/ABSOLUTE\/PATH/);
});

test('a pod runs at once: sandbox ready with an IP, container running with a log line', async () => {
  const server = await startFakeCri(`unix://${join(dir, 'a.sock')}`);
  const cri = new CriClient({ endpoint: `unix://${server.path}`, timeoutMs: 10_000 });
  try {
    assert.is((await cri.version()).runtimeName, 'outpost-fake-cri');
    assert.ok((await cri.status()).conditions.every((c) => c.status));
    assert.ok(await cri.imageStatus('example.org/anything:1'), 'every image is present');
    const sc = sandboxConfig('web');
    const sb = await cri.runPodSandbox(sc);
    const st = await cri.podSandboxStatus(sb);
    assert.is(st.state, 'SANDBOX_READY');
    assert.match(st.network?.ip ?? '', /^10\.88\./);
    const hostSb = await cri.runPodSandbox(sandboxConfig('host', true));
    assert.is((await cri.podSandboxStatus(hostSb)).network?.ip, '');

    const cid = await cri.createContainer(
      sb,
      { metadata: { name: 'main' }, image: { image: 'busybox' }, logPath: 'main/0.log', labels: { c: '1' } },
      sc,
    );
    assert.is((await cri.containerStatus(cid)).state, 'CONTAINER_CREATED');
    await cri.startContainer(cid);
    const cs = await cri.containerStatus(cid);
    assert.is(cs.state, 'CONTAINER_RUNNING');
    assert.is(cs.logPath, join(dir, 'logs', 'web', 'main/0.log'));
    assert.match(readFileSync(cs.logPath, 'utf8'), / stdout F fake-cri: main running\n$/);
    assert.is((await cri.execSync(cid, ['true'], 5)).exitCode, 0);
    assert.is((await cri.listContainerStats()).length, 1);

    assert.is((await cri.listPodSandbox({ labelSelector: { app: 'web' } })).length, 1);
    assert.is((await cri.listPodSandbox()).length, 2);
    assert.is((await cri.listContainers({ podSandboxId: hostSb })).length, 0);
    assert.is((await cri.listContainers({ state: { state: 'CONTAINER_RUNNING' } })).length, 1);

    await cri.stopPodSandbox(sb);
    assert.is((await cri.containerStatus(cid)).state, 'CONTAINER_EXITED');
    assert.is((await cri.podSandboxStatus(sb)).state, 'SANDBOX_NOTREADY');
    await cri.removePodSandbox(sb);
    await cri.removePodSandbox(sb); // idempotent
    const gone = await cri.containerStatus(cid).then(
      () => undefined,
      (e: { code?: number }) => e,
    );
    assert.is(gone?.code, 404);
    assert.is(server.runtime.calls.get('RunPodSandbox'), 2);
  } finally {
    cri.close();
    await server.stop();
  }
});

test('refuses a socket another process answers on, and a path that is no socket', async () => {
  const live = join(dir, 'live.sock');
  const other: Server = createServer((s) => s.destroy());
  await new Promise<void>((r) => other.listen(live, r));
  try {
    await startFakeCri(`unix://${live}`).then(
      () => assert.unreachable('served on a live socket'),
      (e: Error) => assert.match(e.message, /in use by another process/),
    );
    assert.ok(statSync(live).isSocket(), 'the other server keeps its socket');
  } finally {
    await new Promise((r) => other.close(r));
  }
  const file = join(dir, 'file');
  writeFileSync(file, 'keep me');
  await startFakeCri(file).then(
    () => assert.unreachable('replaced a regular file'),
    (e: Error) => assert.match(e.message, /not a socket/),
  );
  assert.is(readFileSync(file, 'utf8'), 'keep me');
});

test('replaces a stale socket file', async () => {
  const stale = join(dir, 'stale.sock');
  // A server killed with SIGKILL leaves its socket file behind, nothing listening on it.
  const script = `require('net').createServer().listen(${JSON.stringify(stale)}, () => process.kill(process.pid, 'SIGKILL'))`;
  spawnSync(process.execPath, ['-e', script], { timeout: 30_000 });
  assert.ok(statSync(stale).isSocket(), 'a stale socket file is there');
  const server = await startFakeCri(stale);
  const cri = new CriClient({ endpoint: stale, timeoutMs: 10_000 });
  try {
    assert.is((await cri.version()).runtimeName, 'outpost-fake-cri');
  } finally {
    cri.close();
    await server.stop();
  }
});

test.run();
