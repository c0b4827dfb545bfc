// Fidelity fixes found with the official clients: boolean spelling, trailing slashes, too-old
// biome-ignore-all lint/suspicious/noExplicitAny: watch events are read loosely.
// watches, and the streaming list's end-of-initial-events bookmark.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { testApp } from '../helpers/app.ts';

async function lines(res: Response, n: number): Promise<{ type: string; object: Record<string, any> }[]> {
  const reader = res.body!.getReader();
  const out: { type: string; object: Record<string, any> }[] = [];
  let text = '';
  while (out.length < n) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
    const parts = text.split('\n');
    text = parts.pop()!;
    for (const p of parts) if (p) out.push(JSON.parse(p));
  }
  await reader.cancel();
  return out;
}

const pod = (name: string) =>
  JSON.stringify({ metadata: { name }, spec: { containers: [{ name: 'm', image: 'busybox' }] } });

test('watch=True (the Python client) is a watch', async () => {
  const { app } = testApp();
  await app.request('/api/v1/namespaces/default/pods', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: pod('a'),
  });
  const res = await app.request('/api/v1/namespaces/default/pods?watch=True');
  assert.is(res.status, 200);
  const ev = await lines(res, 1);
  assert.is(ev[0]!.type, 'ADDED');
});

test('discovery answers with a trailing slash', async () => {
  const { app } = testApp();
  for (const path of ['/api/', '/api/v1/', '/apis/', '/version/'])
    assert.is((await app.request(path)).status, 200, path);
});

test('a too-old resourceVersion is 200 with one ERROR event (410 Expired)', async () => {
  const { app, store } = testApp();
  // Push the watch cache past its capacity so resourceVersion 1 is no longer kept.
  for (let i = 0; i < 2005; i++) store.rv.next();
  for (let i = 0; i < 2005; i++)
    store.hub.publish('pods', { type: 'MODIFIED', rv: store.rv.current, object: {} });
  const res = await app.request('/api/v1/namespaces/default/pods?watch=1&resourceVersion=1');
  assert.is(res.status, 200);
  const [ev] = await lines(res, 1);
  assert.is(ev!.type, 'ERROR');
  assert.is(ev!.object.code, 410);
  assert.is(ev!.object.reason, 'Expired');
});

test('sendInitialEvents=true ends the initial events with a bookmark', async () => {
  const { app } = testApp();
  await app.request('/api/v1/namespaces/default/pods', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: pod('a'),
  });
  const res = await app.request(
    '/api/v1/namespaces/default/pods?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan',
  );
  const ev = await lines(res, 2);
  assert.equal(
    ev.map((e) => e.type),
    ['ADDED', 'BOOKMARK'],
  );
  assert.is(ev[1]!.object.metadata.annotations['k8s.io/initial-events-end'], 'true');
  assert.is(ev[1]!.object.kind, 'Pod');
});

test('list items of built-in kinds carry no kind or apiVersion, as kube-apiserver lists them', async () => {
  const { app } = testApp();
  await app.request('/api/v1/namespaces/default/pods', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: pod('a'),
  });
  const list = (await (await app.request('/api/v1/namespaces/default/pods')).json()) as any;
  assert.is(list.kind, 'PodList');
  assert.is(list.items[0].metadata.name, 'a');
  assert.is(list.items[0].kind, undefined);
  assert.is(list.items[0].apiVersion, undefined);
  // A single GET still names its kind.
  assert.is(((await (await app.request('/api/v1/namespaces/default/pods/a')).json()) as any).kind, 'Pod');
});

test('the lists deletecollection answers and the node list carry their items as kube-apiserver does', async () => {
  const { app } = testApp();
  const post = (kind: string, body: string) =>
    app.request(`/api/v1/namespaces/default/${kind}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
  await post('pods', pod('a'));
  await post('configmaps', JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }));
  for (const kind of ['pods', 'configmaps']) {
    const res = await app.request(`/api/v1/namespaces/default/${kind}`, { method: 'DELETE' });
    assert.is(res.status, 200, kind);
    const list = (await res.json()) as any;
    assert.is(list.items.length, 1, kind);
    assert.is(list.items[0].kind, undefined, kind);
    assert.is(list.items[0].apiVersion, undefined, kind);
  }
  const nodes = (await (await app.request('/api/v1/nodes')).json()) as any;
  assert.is(nodes.kind, 'NodeList');
  assert.is(nodes.items.length, 1);
  assert.is(nodes.items[0].kind, undefined);
  assert.is(nodes.items[0].apiVersion, undefined);
});

test('every watcher of a change gets the same event, its object whole as a GET answers it', async () => {
  const { app, store } = testApp();
  await app.request('/api/v1/namespaces/default/pods', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: pod('a'),
  });
  const rv = store.rv.current;
  const watches = await Promise.all([
    app.request(`/api/v1/pods?watch=1&resourceVersion=${rv}`),
    app.request(`/api/v1/namespaces/default/pods?watch=1&resourceVersion=${rv}`),
  ]);
  const uid = store.pods.record('default', 'a')!.uid;
  store.pods.setStatus(uid, { phase: 'Running', message: 'watched' });
  const [a, b] = await Promise.all(watches.map((w) => lines(w, 1)));
  assert.equal(a, b);
  assert.is(a![0]!.type, 'MODIFIED');
  const got = (await (await app.request('/api/v1/namespaces/default/pods/a')).json()) as any;
  assert.equal(a![0]!.object, got);
  assert.is(got.kind, 'Pod');
  assert.is(got.status.message, 'watched');
  // A removal carries the pod as it was last, at the removal's resourceVersion.
  const again = await app.request(`/api/v1/pods?watch=1&resourceVersion=${store.rv.current}`);
  store.pods.remove('default', 'a');
  const [gone] = await lines(again, 1);
  assert.is(gone!.type, 'DELETED');
  assert.is(gone!.object.metadata.name, 'a');
  assert.is(gone!.object.metadata.resourceVersion, String(store.rv.current));
});

test('Table watchers (kubectl get -w) of a change get the same row, headers with their first', async () => {
  const { app, store } = testApp();
  await app.request('/api/v1/namespaces/default/pods', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: pod('a'),
  });
  const accept = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' };
  const watchTable = () =>
    app.request(`/api/v1/pods?watch=1&resourceVersion=${store.rv.current}`, { headers: accept });
  const watches = await Promise.all([watchTable(), watchTable()]);
  const uid = store.pods.record('default', 'a')!.uid;
  store.pods.setStatus(uid, { phase: 'Running' });
  store.pods.setStatus(uid, { phase: 'Succeeded' });
  const [a, b] = await Promise.all(watches.map((w) => lines(w, 2)));
  assert.equal(a, b);
  assert.is(a![0]!.object.kind, 'Table');
  assert.ok(a![0]!.object.columnDefinitions.length > 0);
  assert.equal(a![1]!.object.columnDefinitions, []);
  assert.equal(
    a!.map((e) => [e.type, e.object.rows[0].cells[0], e.object.rows[0].cells[2]]),
    [
      ['MODIFIED', 'a', 'Running'],
      ['MODIFIED', 'a', 'Succeeded'],
    ],
  );
});

test('many watches share one shutdown listener (no leak warning) and all end with the server', async () => {
  const shutdown = new AbortController();
  const { app } = testApp({ shutdown: shutdown.signal });
  const warnings: Error[] = [];
  const warned = (w: Error) => warnings.push(w);
  process.on('warning', warned);
  try {
    const watches = await Promise.all(
      Array.from({ length: 15 }, () => app.request('/api/v1/pods?watch=1&resourceVersion=0')),
    );
    // Each watch has answered (headers sent) and waits for changes.
    for (const w of watches) assert.is(w.status, 200);
    shutdown.abort();
    const ends = await Promise.all(watches.map((w) => w.text()));
    assert.equal(ends, new Array(15).fill(''));
    // A warning is emitted on the next tick: give it one.
    await new Promise((r) => setImmediate(r));
    assert.equal(
      warnings.filter((w) => w.name === 'MaxListenersExceededWarning'),
      [],
    );
  } finally {
    process.off('warning', warned);
  }
});

test.run();
