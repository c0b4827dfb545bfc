// While the agent's later parts load (Deps.starting), cached reads are answered and every other
// request waits for them; route files are imported on their first request.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import { type AppDeps, createApp, isCachedRead } from '#lib/app.ts';
import { silentLogger } from '#lib/log.ts';
import { createStore } from '#lib/store/index.ts';
import { testApp } from '../helpers/app.ts';

test('cached reads: core objects, discovery, version, health; not logs, exec, nodes or writes', () => {
  for (const path of [
    '/api/v1/pods',
    '/api/v1/namespaces/default/pods/web',
    '/api/v1/namespaces/default/configmaps',
    '/api/v1/events',
    '/api',
    '/apis',
    '/version',
    '/readyz',
    '/livez',
    '/healthz',
  ])
    assert.ok(isCachedRead('GET', path), path);
  for (const [method, path, upgrade] of [
    ['GET', '/api/v1/namespaces/default/pods/web/log'],
    ['GET', '/api/v1/namespaces/default/pods/web/exec'],
    ['POST', '/api/v1/namespaces/default/pods/web/portforward'],
    ['GET', '/api/v1/nodes/edge-1'],
    ['GET', '/api/v1/nodes'],
    ['GET', '/api/v1/namespaces/default/pods/web', 'websocket'],
    ['POST', '/api/v1/namespaces/default/pods'],
    ['DELETE', '/api/v1/namespaces/default/pods/web'],
    ['GET', '/apis/devices.kubeedge.io/v1beta1/devices'],
    ['GET', '/metrics'],
    ['GET', '/ui/'],
  ] as const)
    assert.not.ok(isCachedRead(method, path, upgrade), `${method} ${path}`);
});

test('while starting, a cached read is answered and a write waits until the parts are there', async () => {
  let loaded!: () => void;
  const starting = new Promise<void>((resolve) => {
    loaded = resolve;
  });
  const { app } = testApp({ starting });
  let written: Response | undefined;
  const write = Promise.resolve(
    app.request('/api/v1/namespaces/default/pods', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web' },
        spec: { containers: [{ name: 'main', image: 'busybox' }] },
      }),
    }),
  ).then((res) => {
    written = res;
    return res;
  });
  const read = await app.request('/api/v1/pods');
  assert.is(read.status, 200);
  assert.equal(((await read.json()) as { items: unknown[] }).items, []);
  // The write cannot have been answered: it waits for `starting`, which nothing has resolved.
  assert.is(written, undefined);
  loaded();
  assert.is((await write).status, 201);
  const after = await app.request('/api/v1/pods');
  assert.is(((await after.json()) as { items: unknown[] }).items.length, 1);
});

test('what the agent fills in before `starting` resolves is seen by every later request', async () => {
  let loaded!: () => void;
  const deps: AppDeps = {
    store: createStore(openMetabase(':memory:'), { host: 'edge-1' }),
    log: silentLogger,
    now: Date.now,
    nodeName: 'edge-1',
    shutdown: new AbortController().signal,
    health: () => [],
    starting: new Promise<void>((resolve) => {
      loaded = resolve;
    }),
  };
  const app = createApp(deps);
  const before = await (await app.request('/readyz?verbose')).text();
  assert.not.match(before, 'runtime-network');
  deps.runtimeNetwork = () => ({ ready: true, reason: '', message: '' });
  delete deps.starting;
  loaded();
  await Promise.resolve();
  assert.match(await (await app.request('/readyz?verbose')).text(), '[+]runtime-network ok');
});

test('a route with a validator chain answers through its lazily imported file, errors as Status', async () => {
  const { app } = testApp();
  const bad = await app.request('/api/v1/pods?limit=notanumber');
  assert.is(bad.status, 400);
  assert.is(((await bad.json()) as { kind: string }).kind, 'Status');
  const ok = await app.request('/api/v1/pods/');
  assert.is(ok.status, 200);
  const wrongMethod = await app.request('/version', { method: 'DELETE' });
  assert.is(wrongMethod.status, 405);
});

test.run();
