// `node --lite-mode` (no optimizing compilers, no WebAssembly) runs `outpost serve` since the serve
// process uses Outpost's own fetch classes (lib/http/fetch-classes.ts): reads, writes and watches
// answer as usual. Joining a cluster needs WebAssembly (the cloud link's HTTP client), so `--cloud`
// under --jitless is a configuration error that says so, not a link failing forever.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ensureBundle, type OutpostProcess, spawnOutpost } from '../helpers/outpost-process.ts';

const dir = mkdtempSync(join(tmpdir(), 'outpost-lite-mode-'));
let agent: OutpostProcess | undefined;

test.after(async () => {
  await agent?.kill9();
  rmSync(dir, { recursive: true, force: true });
});

test('serve under --lite-mode lists, creates, watches and deletes pods', async () => {
  const manifests = join(dir, 'manifests');
  mkdirSync(manifests);
  writeFileSync(
    join(manifests, 'web.yaml'),
    'apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default}\nspec: {containers: [{name: main, image: busybox:1.36}]}\n',
  );
  agent = await spawnOutpost({
    node: [process.execPath, '--lite-mode'],
    dataDir: join(dir, 'data'),
    runtimeEndpoint: `unix://${join(dir, 'no-runtime.sock')}`,
    nodeName: 'lite',
    manifests,
  });
  const pods = `${agent.url}/api/v1/namespaces/default/pods`;
  for (const end = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 100))) {
    const list = (await (await fetch(pods)).json()) as { items: { metadata: { name: string } }[] };
    if (list.items.some((p) => p.metadata.name === 'web')) break;
    assert.ok(Date.now() < end, 'the manifest pod is listed');
  }
  const watch = await fetch(`${pods}?watch=true`);
  assert.is(watch.status, 200);
  const created = await fetch(pods, {
    method: 'POST',
    headers: { ...agent.admin, 'content-type': 'application/json' },
    body: JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'api' },
      spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] },
    }),
  });
  assert.is(created.status, 201, await created.clone().text());
  // The watch sees the manifest pod, then the new one.
  const reader = watch.body!.getReader();
  let seen = '';
  while (!seen.includes('"name":"api"')) {
    const { done, value } = await reader.read();
    assert.not.ok(done, `the watch ended before the new pod: ${seen}`);
    seen += new TextDecoder().decode(value);
  }
  await reader.cancel();
  const bad = await fetch(pods, {
    method: 'POST',
    headers: { ...agent.admin, 'content-type': 'application/json' },
    body: '{"kind":',
  });
  assert.is(bad.status, 400);
  assert.is(((await bad.json()) as { kind: string }).kind, 'Status');
  const deleted = await fetch(`${pods}/api`, { method: 'DELETE', headers: agent.admin });
  assert.ok(deleted.ok, String(deleted.status));
});

test('--cloud under --jitless stops the start with a configuration error that says why', () => {
  const kubeconfig = join(dir, 'cloud.kubeconfig');
  writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
  const run = spawnSync(
    process.execPath,
    [
      '--jitless',
      ensureBundle(),
      'serve',
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      join(dir, 'data-cloud'),
      '--cloud',
      kubeconfig,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.is(run.status, 2, run.stderr);
  assert.match(run.stderr, /--cloud needs WebAssembly/);
});

test.run();
