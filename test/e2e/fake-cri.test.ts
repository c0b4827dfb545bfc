// The bench's fake CRI runtime as `npm run fake-cri` starts it, with the real agent (the bundle,
// unchanged) pointed at it with --runtime-endpoint: pods from a manifest become Running with
// their containers ready, and `logs` shows the fake runtime's line. A second fake runtime on the
// same live socket refuses to start and leaves the first one serving.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Pod } from '#lib/kube/types.ts';
import { waitFor } from '../helpers/lab.ts';
import { type OutpostProcess, spawnOutpost } from '../helpers/outpost-process.ts';

const root = join(import.meta.dirname, '../..');
// A short directory: the socket path must fit in sun_path.
const dir = mkdtempSync(join(tmpdir(), 'fcri-e2e-'));
const socket = join(dir, 'cri.sock');
let fake: ChildProcess | undefined;
let agent: OutpostProcess | undefined;

const fakeCri = (listen: string) =>
  spawn(process.execPath, ['--import', 'tsx', join(root, 'bench/fake-cri/main.ts'), '--listen', listen], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });

test.after(async () => {
  await agent?.kill9();
  if (fake && fake.exitCode === null) {
    const exited = new Promise((r) => fake!.once('exit', r));
    fake.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

const manifest = `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: fleet}
spec:
  containers:
    - {name: main, image: example.org/web:1}
    - {name: side, image: example.org/side:1}
---
apiVersion: v1
kind: Pod
metadata: {name: host, namespace: fleet}
spec:
  hostNetwork: true
  containers:
    - {name: main, image: example.org/host:1, command: [sleep, "3600"]}
`;

test('Outpost runs manifest pods on the fake runtime', async () => {
  fake = fakeCri(`unix://${socket}`);
  let out = '';
  fake.stdout!.on('data', (d) => {
    out += d;
  });
  await waitFor(() => out.includes(`listening ${socket}`), 60_000);

  const manifests = join(dir, 'manifests');
  mkdirSync(manifests);
  writeFileSync(join(manifests, 'pods.yaml'), manifest);
  agent = await spawnOutpost({
    dataDir: join(dir, 'data'),
    runtimeEndpoint: `unix://${socket}`,
    nodeName: 'fake-node',
    manifests,
    logLevel: 'warn',
    startTimeoutMs: 60_000,
  });
  const running = async () => {
    const r = await fetch(`${agent!.url}/api/v1/namespaces/fleet/pods`).catch(() => undefined);
    if (!r?.ok) return false;
    const { items } = (await r.json()) as { items: Pod[] };
    return (
      items.length === 2 &&
      items.every(
        (p) => p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).every((c) => c.ready),
      ) &&
      items
    );
  };
  const pods = await waitFor(running, 120_000, 500);
  assert.ok(pods, 'both pods Running with their containers ready');
  const web = pods.find((p) => p.metadata?.name === 'web')!;
  assert.is(web.status?.containerStatuses?.length, 2);

  const log = await fetch(`${agent.url}/api/v1/namespaces/fleet/pods/web/log?container=main`, {
    headers: agent.admin,
  });
  assert.is(log.status, 200);
  assert.match(await log.text(), /fake-cri: main running/);
});

test('a second fake runtime refuses the live socket and the first one keeps serving', () => {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(root, 'bench/fake-cri/main.ts'), '--listen', `unix://${socket}`],
    { cwd: root, encoding: 'utf8', timeout: 60_000 },
  );
  assert.is(r.status, 1, r.stderr);
  assert.match(r.stderr, /in use by another process/);
  assert.is(fake?.exitCode, null);
});

test('the agent still sees its pods Running after the refused start', async () => {
  const r = await fetch(`${agent!.url}/api/v1/namespaces/fleet/pods/web`);
  assert.is(r.status, 200);
  assert.is(((await r.json()) as Pod).status?.phase, 'Running');
});

test.run();
