// The app's router keeps its latest matches: each is what Hono's TrieRouter answers for the same
// method and path, shared by the requests that ask again, bounded, and dropped when routes change.

import { TrieRouter } from 'hono/router/trie-router';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MATCHES_KEPT, MemoRouter } from '#lib/http/router.ts';
import type { Pod } from '#lib/kube/types.ts';
import { routes } from '#routes/_table.gen.ts';
import { testApp } from '../helpers/app.ts';

/** Both routers with every route of the table, as lib/app.ts adds them, behind one middleware. */
function routers() {
  const memo = new MemoRouter<string>();
  const trie = new TrieRouter<string>();
  for (const r of [memo, trie]) {
    r.add('ALL', '*', 'middleware');
    for (const route of routes)
      for (const method of route.methods) {
        r.add(method, route.path, `${method} ${route.path}`);
        r.add(method, `${route.path}/`, `${method} ${route.path}/`);
      }
  }
  return { memo, trie };
}

// A concrete path for each route, and paths no route has.
const paths = [
  ...routes.map((r) => r.path.replace(/:(\w+)/g, (_, name: string) => `x-${name}`)),
  '/api/v1/namespaces/default/pods/restart',
  '/api/v1/namespaces/default/pods/web/eviction',
  '/pods/default/web/logs/',
  '/nope',
  '/',
];

test('every path and method: the trie router answer, the same result object when asked again', () => {
  const { memo, trie } = routers();
  for (const path of paths)
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      const first = memo.match(method, path);
      assert.equal(first, trie.match(method, path), `${method} ${path}`);
      assert.is(memo.match(method, path), first, `${method} ${path}, asked again`);
    }
});

test(`at most ${MATCHES_KEPT} matches kept; the oldest goes first`, () => {
  const { memo } = routers();
  const first = memo.match('GET', '/api/v1/namespaces/ns-0/pods/p');
  for (let i = 1; i <= MATCHES_KEPT; i++) memo.match('GET', `/api/v1/namespaces/ns-${i}/pods/p`);
  assert.is(memo.size, MATCHES_KEPT);
  const latest = memo.match('GET', `/api/v1/namespaces/ns-${MATCHES_KEPT}/pods/p`);
  assert.is(memo.match('GET', `/api/v1/namespaces/ns-${MATCHES_KEPT}/pods/p`), latest, 'the latest is kept');
  const again = memo.match('GET', '/api/v1/namespaces/ns-0/pods/p');
  assert.is.not(again, first, 'the oldest was dropped, and is matched anew');
  assert.equal(again, first);
  assert.is(memo.size, MATCHES_KEPT);
});

test('a route added after a match is found: adding drops what was kept', () => {
  const memo = new MemoRouter<string>();
  memo.add('GET', '/a/:name', 'a');
  assert.equal(
    memo.match('GET', '/b/x')[0].map(([h]) => h),
    [],
  );
  memo.add('GET', '/b/:name', 'b');
  assert.is(memo.size, 0);
  assert.equal(
    memo.match('GET', '/b/x')[0].map(([h, params]) => [h, { ...params }]),
    [['b', { name: 'x' }]],
  );
});

test('the app: requests for different objects on the same route get their own parameters', async () => {
  const { app, store } = testApp();
  assert.is(app.router.name, 'MemoRouter');
  for (const [ns, name] of [
    ['a', 'web'],
    ['b', 'db'],
  ] as const) {
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: ns },
      spec: { nodeName: 'edge-1', containers: [{ name: 'main', image: 'busybox' }] },
    };
    store.pods.put(pod, 'api');
  }
  for (let round = 0; round < 2; round++)
    for (const [ns, name] of [
      ['a', 'web'],
      ['b', 'db'],
      ['a', 'db'],
    ] as const) {
      const res = await app.request(`/api/v1/namespaces/${ns}/pods/${name}`);
      const body = (await res.json()) as { metadata?: { namespace: string; name: string }; message?: string };
      if (ns === 'a' && name === 'db') {
        assert.is(res.status, 404);
        assert.is(body.message, 'pods "db" not found');
      } else {
        assert.is(res.status, 200, `${ns}/${name}`);
        assert.equal([body.metadata?.namespace, body.metadata?.name], [ns, name]);
      }
    }
});

test.run();
