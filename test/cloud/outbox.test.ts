// The outbox and its sender against a small in-memory fake of the API server's answers: order
// per object, coalescing, retries after a link failure, nothing acknowledged before the cloud
// answered. The real API server is exercised by test/e2e/cloud-*.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import type { ApiRequest, ApiResponse } from '#lib/cloud/api.ts';
import { LinkError } from '#lib/cloud/api.ts';
import { OutboxSender } from '#lib/cloud/outbox-sender.ts';
import type { Pod, PodStatus } from '#lib/kube/types.ts';
import { silentLogger } from '#lib/log.ts';
import { createStore, type Store } from '#lib/store/index.ts';

function setup(): { store: Store; uid: (name: string) => string } {
  const store = createStore(openMetabase(':memory:'), { host: 'edge-1' });
  store.outbox.enabled = true;
  for (const name of ['a', 'b']) {
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', uid: `uid-${name}` },
      spec: { nodeName: 'edge-1', containers: [{ name: 'main', image: 'busybox' }] },
    };
    store.pods.put(pod, 'cloud');
  }
  return { store, uid: (name) => `uid-${name}` };
}

const status = (phase: string, n: number): PodStatus => ({ phase, message: `n${n}` }) as PodStatus;

interface Call {
  method: string;
  path: string;
  body: unknown;
}

/** Records calls; `answer` decides each reply (default 200/201), `down` makes every call fail. */
function fakeApi(answer: (c: Call) => ApiResponse | undefined = () => undefined) {
  const calls: Call[] = [];
  const state = { down: false };
  const request: ApiRequest = async (method, path, body) => {
    await new Promise((r) => setImmediate(r));
    if (state.down) throw new Error('connect ECONNREFUSED');
    const c = { method, path, body };
    calls.push(c);
    return answer(c) ?? { status: method === 'POST' ? 201 : 200, body: {} };
  };
  return { calls, state, request };
}

test('disabled: no entries; enabled: status, event and delete entries in the change transaction', () => {
  const { store, uid } = setup();
  store.outbox.enabled = false;
  store.pods.setStatus(uid('a'), status('Pending', 0));
  assert.is(store.outbox.depth(), 0);
  store.outbox.enabled = true;
  store.pods.setStatus(uid('a'), status('Running', 1));
  store.events.record(
    { kind: 'Pod', namespace: 'default', name: 'a', uid: uid('a') },
    'Normal',
    'Started',
    'x',
  );
  // A change whose transaction rolls back leaves no entry behind.
  try {
    store.metabase.sqlite.transaction(() => {
      store.pods.setStatus(uid('b'), status('Running', 2));
      throw new Error('rollback');
    })();
  } catch {}
  store.pods.remove('default', 'a');
  assert.equal(
    store.outbox.peek(10).map((e) => [e.kind, e.key, e.op]),
    [
      ['status', uid('a'), null],
      ['event', store.events.list().items[0]!.metadata.uid, 'create'],
      ['delete', uid('a'), null],
    ],
  );
});

test('a newer status or event replaces the pending one, keeping the oldest age and the create', () => {
  let now = 1_000;
  const store = createStore(openMetabase(':memory:'), { host: 'edge-1', now: () => now });
  store.outbox.enabled = true;
  store.pods.put(
    { metadata: { name: 'a', namespace: 'default' }, spec: { nodeName: 'edge-1', containers: [] } },
    'cloud',
  );
  const uid = store.pods.record('default', 'a')!.uid;
  store.pods.setStatus(uid, status('Pending', 1));
  const inv = { kind: 'Pod', namespace: 'default', name: 'a', uid };
  store.events.record(inv, 'Warning', 'BackOff', 'back-off');
  now = 5_000;
  store.pods.setStatus(uid, status('Running', 2));
  store.events.record(inv, 'Warning', 'BackOff', 'back-off');
  store.events.record(inv, 'Warning', 'BackOff', 'back-off');
  const entries = store.outbox.peek(10);
  assert.is(entries.length, 2);
  assert.is((entries[0]!.payload as { status: PodStatus }).status.message, 'n2');
  assert.is(entries[1]!.op, 'create');
  assert.is((entries[1]!.payload as { count: number }).count, 3);
  assert.is(store.outbox.oldestAgeSeconds(), 4);
});

test('the sender sends each pod in order (status before its deletion) and acknowledges', async () => {
  const { store, uid } = setup();
  store.pods.setStatus(uid('a'), status('Running', 1));
  store.pods.setStatus(uid('b'), status('Running', 1));
  store.events.record(
    { kind: 'Pod', namespace: 'default', name: 'b', uid: uid('b') },
    'Normal',
    'Killing',
    'k',
  );
  store.pods.setStatus(uid('b'), status('Succeeded', 2));
  store.pods.remove('default', 'b');
  const api = fakeApi();
  const sender = new OutboxSender({ store, request: api.request, nodeName: 'edge-1', log: silentLogger });
  assert.is(await sender.drain(), 4);
  assert.is(store.outbox.depth(), 0);
  const forB = api.calls.filter((c) => c.path.includes('/pods/b'));
  assert.equal(
    forB.map((c) => c.method),
    ['PATCH', 'DELETE'],
  );
  assert.equal(forB[0]!.body, { metadata: { uid: uid('b') }, status: status('Succeeded', 2) });
  assert.equal(forB[1]!.body, {
    kind: 'DeleteOptions',
    apiVersion: 'v1',
    gracePeriodSeconds: 0,
    preconditions: { uid: uid('b') },
  });
  const ev = api.calls.find((c) => c.path === '/api/v1/namespaces/default/events')!;
  assert.is((ev.body as { count: number }).count, 1);
  assert.is((ev.body as { metadata: { resourceVersion?: string } }).metadata.resourceVersion, undefined);
  const row = store.metabase.sqlite
    .prepare('SELECT seq, uploaded_seq FROM pod_status WHERE uid = ?')
    .get(uid('a'));
  assert.equal(row, { seq: 1, uploaded_seq: 1 });
});

test('a link failure keeps what was not answered; the next drain sends it, repeats become patches', async () => {
  const { store, uid } = setup();
  const inv = { kind: 'Pod', namespace: 'default', name: 'a', uid: uid('a') };
  store.events.record(inv, 'Normal', 'Pulled', 'pulled');
  const api = fakeApi();
  const sender = new OutboxSender({ store, request: api.request, nodeName: 'edge-1', log: silentLogger });
  await sender.drain();
  // Offline: a repeat and a new status queue up.
  api.state.down = true;
  store.events.record(inv, 'Normal', 'Pulled', 'pulled');
  store.pods.setStatus(uid('a'), status('Running', 1));
  const err = await sender.drain().catch((e: unknown) => e);
  assert.instance(err, LinkError);
  assert.is(store.outbox.depth(), 2);
  api.state.down = false;
  assert.is(await sender.drain(), 2);
  const patch = api.calls.find((c) => c.method === 'PATCH' && c.path.includes('/events/'))!;
  assert.equal(patch.body, {
    count: 2,
    lastTimestamp: store.events.list().items[0]!.lastTimestamp,
    message: 'pulled',
  });
});

test('an event created twice (acknowledgement lost) becomes a patch; a patched event gone is created', async () => {
  const { store, uid } = setup();
  const inv = { kind: 'Pod', namespace: 'default', name: 'a', uid: uid('a') };
  store.events.record(inv, 'Normal', 'Pulled', 'pulled');
  const api = fakeApi((c) =>
    c.method === 'POST' ? { status: 409, body: { reason: 'AlreadyExists' } } : undefined,
  );
  const sender = new OutboxSender({ store, request: api.request, nodeName: 'edge-1', log: silentLogger });
  await sender.drain();
  assert.equal(
    api.calls.map((c) => c.method),
    ['POST', 'PATCH'],
  );
  store.events.record(inv, 'Normal', 'Pulled', 'pulled');
  const api2 = fakeApi((c) => (c.method === 'PATCH' ? { status: 404, body: {} } : undefined));
  await new OutboxSender({ store, request: api2.request, nodeName: 'edge-1', log: silentLogger }).drain();
  assert.equal(
    api2.calls.map((c) => c.method),
    ['PATCH', 'POST'],
  );
  assert.is((api2.calls[1]!.body as { count: number }).count, 2);
});

test('answers that will not change (forbidden, pod gone) drop the entry; 5xx and 429 keep it', async () => {
  const { store, uid } = setup();
  store.pods.setStatus(uid('a'), status('Running', 1));
  store.pods.setStatus(uid('b'), status('Running', 1));
  const api = fakeApi((c) =>
    c.path.includes('/pods/a/') ? { status: 404, body: {} } : { status: 503, body: { message: 'busy' } },
  );
  const sender = new OutboxSender({ store, request: api.request, nodeName: 'edge-1', log: silentLogger });
  const err = await sender.drain().catch((e: unknown) => e);
  assert.instance(err, LinkError);
  assert.equal(
    store.outbox.peek(10).map((e) => e.key),
    [uid('b')],
  );
});

test('static pods: status goes to the mirror pod, created once with the mirror annotations', async () => {
  const store = createStore(openMetabase(':memory:'), { host: 'edge-1' });
  store.outbox.enabled = true;
  store.pods.put(
    {
      metadata: { name: 'web', namespace: 'default', uid: 'static-1' },
      spec: { nodeName: 'edge-1', containers: [] },
    },
    'manifest',
    '/etc/outpost/web.yaml',
  );
  store.pods.setStatus('static-1', status('Running', 1));
  store.pods.setStatus('static-1', status('Running', 2));
  let mirror: Pod | undefined;
  const api = fakeApi((c) => {
    if (c.method === 'GET' && c.path === '/api/v1/nodes/edge-1')
      return { status: 200, body: { metadata: { uid: 'node-uid' } } };
    if (c.method === 'GET') return mirror ? { status: 200, body: mirror } : { status: 404, body: {} };
    if (c.method === 'POST') {
      mirror = structuredClone(c.body as Pod);
      mirror.metadata.uid = 'mirror-uid';
      return { status: 201, body: mirror };
    }
    return undefined;
  });
  const sender = new OutboxSender({ store, request: api.request, nodeName: 'edge-1', log: silentLogger });
  await sender.drain();
  store.pods.setStatus('static-1', status('Running', 3));
  await sender.drain();
  assert.is(mirror!.metadata.name, 'web-edge-1');
  assert.ok(mirror!.metadata.annotations!['kubernetes.io/config.mirror']);
  assert.equal(mirror!.metadata.ownerReferences, [
    { apiVersion: 'v1', kind: 'Node', name: 'edge-1', uid: 'node-uid', controller: true },
  ]);
  const patches = api.calls.filter((c) => c.method === 'PATCH');
  assert.equal(
    patches.map((c) => [c.path, (c.body as { metadata: { uid: string } }).metadata.uid]),
    [
      ['/api/v1/namespaces/default/pods/web-edge-1/status', 'mirror-uid'],
      ['/api/v1/namespaces/default/pods/web-edge-1/status', 'mirror-uid'],
    ],
  );
  assert.is(api.calls.filter((c) => c.method === 'POST').length, 1);
});

test.run();
