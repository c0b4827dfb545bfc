// The reflector against a scripted ListWatch (unit level; the real API server is in
// test/e2e/cloud-pods.test.ts): resume from the stored resourceVersion without listing, bookmarks,
// relist on 410 (as an ERROR event and as an HTTP 410), and the pod source's view of it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import { CloudPodSource } from '#lib/cloud/pod-source.ts';
import { GoneError, type ListWatch, Reflector, type WatchEvent } from '#lib/cloud/reflector.ts';
import type { KubeObject, Pod, PodStatus } from '#lib/kube/types.ts';
import { silentLogger } from '#lib/log.ts';
import { createStore } from '#lib/store/index.ts';

const pod = (name: string, rv: number, extra: Partial<Pod['metadata']> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'demo', uid: `uid-${name}`, resourceVersion: String(rv), ...extra },
  spec: { nodeName: 'edge-1', containers: [{ name: 'main', image: 'busybox' }] },
  status: { phase: 'Pending' },
});

/** Each watch call plays the next script (events, then `end`: the stream ends, or throws). */
function scripted(lists: KubeObject[][], watches: { events: WatchEvent[]; end?: Error }[]) {
  const calls: string[] = [];
  let listRv = 100;
  const lw: ListWatch = {
    async list() {
      calls.push('list');
      return { items: lists.shift() ?? [], resourceVersion: String(listRv++) };
    },
    async *watch(rv, signal) {
      calls.push(`watch ${rv}`);
      const w = watches.shift();
      if (!w) {
        await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
        return;
      }
      for (const e of w.events) yield e;
      if (w.end) throw w.end;
    },
  };
  return { lw, calls };
}

async function runUntil(r: Reflector, done: () => boolean): Promise<void> {
  const ac = new AbortController();
  const running = r.run(ac.signal);
  for (let i = 0; i < 1000 && !done(); i++) await new Promise((res) => setImmediate(res));
  ac.abort();
  await running;
}

function source() {
  const store = createStore(openMetabase(':memory:'), { host: 'edge-1' });
  return { store, src: new CloudPodSource({ store, nodeName: 'edge-1', log: silentLogger }) };
}

test('lists once, watches from the list, follows bookmarks, re-watches when the stream ends', async () => {
  const { store, src } = source();
  const { lw, calls } = scripted(
    [[pod('a', 5)]],
    [
      {
        events: [
          { type: 'ADDED', object: pod('b', 101) },
          { type: 'BOOKMARK', object: { metadata: { resourceVersion: '150' } } },
        ],
      },
      { events: [{ type: 'MODIFIED', object: pod('b', 160, { labels: { x: 'y' } }) }] },
    ],
  );
  const r = new Reflector({ listWatch: lw, store: src, pause: async () => {} });
  await runUntil(r, () => calls.length >= 4);
  assert.equal(calls.slice(0, 4), ['list', 'watch 100', 'watch 150', 'watch 160']);
  assert.equal(
    store.pods.records({ source: 'cloud' }).map((p) => [p.name, p.uid]),
    [
      ['a', 'uid-a'],
      ['b', 'uid-b'],
    ],
  );
  assert.equal(store.pods.record('demo', 'b')!.desired.metadata.labels, { x: 'y' });
  assert.is(src.resourceVersion(), '160');
});

test('a restart resumes from the stored resourceVersion without listing', async () => {
  const { src } = source();
  src.bookmark('777');
  const { lw, calls } = scripted([], []);
  await runUntil(
    new Reflector({ listWatch: lw, store: src, pause: async () => {} }),
    () => calls.length >= 1,
  );
  assert.equal(calls, ['watch 777']);
});

test('410 (ERROR event or HTTP 410) lists again; pods missing from the relist are stopped as gone', async () => {
  const { store, src } = source();
  const { lw, calls } = scripted(
    [[pod('a', 5), pod('b', 6)], [pod('b', 6)], [pod('b', 6)]],
    [
      {
        events: [{ type: 'ERROR', object: { metadata: {}, code: 410, message: 'too old resource version' } }],
      },
      { events: [], end: new GoneError('410 Gone') },
    ],
  );
  const r = new Reflector({ listWatch: lw, store: src, pause: async () => {} });
  await runUntil(r, () => calls.length >= 5);
  assert.equal(calls.slice(0, 5), ['list', 'watch 100', 'list', 'watch 101', 'list']);
  const a = store.pods.record('demo', 'a')!;
  assert.ok(a.desired.metadata.deletionTimestamp, 'a is stopping');
  assert.is(a.origin, 'gone');
  assert.not.ok(store.pods.record('demo', 'b')!.desired.metadata.deletionTimestamp);
});

test('other failures pause (the link waits) and re-watch from the last resourceVersion, no list', async () => {
  const { src } = source();
  src.bookmark('10');
  let pauses = 0;
  const { lw, calls } = scripted(
    [],
    [
      { events: [{ type: 'ADDED', object: pod('a', 11) }], end: new Error('ECONNRESET') },
      { events: [], end: new Error('ECONNREFUSED') },
    ],
  );
  const r = new Reflector({
    listWatch: lw,
    store: src,
    pause: async () => {
      pauses++;
    },
  });
  await runUntil(r, () => calls.length >= 3);
  assert.equal(calls.slice(0, 3), ['watch 10', 'watch 11', 'watch 11']);
  assert.is(pauses, 2);
  assert.is(r.lists, 0);
});

test('pod source: status and managedFields changes are no writes; deletion timestamps go through; recreated pods replace', () => {
  const { store, src } = source();
  src.apply('ADDED', pod('a', 1), '1');
  const rv = store.pods.record('demo', 'a')!.resourceVersion;
  src.apply(
    'MODIFIED',
    { ...pod('a', 2, { managedFields: [{ manager: 'x' }] }), status: { phase: 'Running' } },
    '2',
  );
  assert.is(store.pods.record('demo', 'a')!.resourceVersion, rv, 'unchanged: not rewritten');
  src.apply(
    'MODIFIED',
    pod('a', 3, { deletionTimestamp: '2026-01-01T00:00:30Z', deletionGracePeriodSeconds: 30 }),
    '3',
  );
  const a = store.pods.record('demo', 'a')!;
  assert.is(a.desired.metadata.deletionGracePeriodSeconds, 30);
  assert.is(a.origin, null, 'deleted gracefully: the removal is reported back');
  // Same name, new uid: the old one was deleted and recreated.
  src.apply('ADDED', pod('a', 4, { uid: 'uid-a2' }), '4');
  assert.is(store.pods.record('demo', 'a')!.uid, 'uid-a2');
  // Pods bound elsewhere and a local static pod's name are left alone.
  src.apply('ADDED', { ...pod('c', 5), spec: { nodeName: 'other', containers: [] } }, '5');
  assert.is(store.pods.record('demo', 'c'), undefined);
  store.pods.put(
    {
      metadata: { name: 'd', namespace: 'demo', uid: 'static' },
      spec: { nodeName: 'edge-1', containers: [] },
    },
    'manifest',
  );
  src.apply('ADDED', pod('d', 6), '6');
  assert.is(store.pods.record('demo', 'd')!.uid, 'static');
  src.apply('DELETED', pod('d', 7), '7');
  assert.not.ok(store.pods.record('demo', 'd')!.desired.metadata.deletionTimestamp);
});

test('a gone pod is removed without reporting; a gracefully deleted one reports its deletion', () => {
  const { store, src } = source();
  store.outbox.enabled = true;
  src.apply('ADDED', pod('a', 1), '1');
  src.apply('ADDED', pod('b', 2), '2');
  src.apply('DELETED', pod('a', 3), '3');
  store.pods.setStatus('uid-a', { phase: 'Running' });
  store.pods.remove('demo', 'a');
  store.pods.remove('demo', 'b');
  assert.equal(
    store.outbox.peek(10).map((e) => [e.kind, e.key]),
    [['delete', 'uid-b']],
  );
});

test('a status the cloud changed behind the node (marked not ready in an outage) is sent again, once', () => {
  const { store, src } = source();
  store.outbox.enabled = true;
  src.apply('ADDED', pod('a', 1), '1');
  const ready: PodStatus = {
    phase: 'Running',
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'ContainersReady', status: 'True' },
    ],
  };
  store.pods.setStatus('uid-a', ready);
  store.outbox.ack(store.outbox.peek(10).map((e) => e.id));
  // The cloud agrees (with conditions of its own the node does not set): nothing to send.
  const agreed: PodStatus = {
    ...ready,
    conditions: [...ready.conditions!, { type: 'PodScheduled', status: 'True' }],
  };
  src.apply('MODIFIED', { ...pod('a', 2), status: agreed }, '2');
  assert.is(store.outbox.depth(), 0);
  // The node lifecycle controller's MarkPodsNotReady: the node's own status goes again, once.
  const notReady: PodStatus = {
    ...ready,
    conditions: [{ type: 'Ready', status: 'False' }, ready.conditions![1]!],
  };
  src.apply('MODIFIED', { ...pod('a', 3), status: notReady }, '3');
  src.apply('MODIFIED', { ...pod('a', 4), status: notReady }, '4');
  const queued = store.outbox.peek(10);
  assert.equal(
    queued.map((e) => [e.kind, e.key]),
    [['status', 'uid-a']],
  );
  assert.equal((queued[0]!.payload as { status: unknown }).status, ready);
  // A pod being deleted is not argued with.
  store.outbox.ack(queued.map((e) => e.id));
  src.apply(
    'MODIFIED',
    { ...pod('a', 5, { deletionTimestamp: '2026-01-01T00:00:30Z' }), status: notReady },
    '5',
  );
  assert.is(store.outbox.depth(), 0);
});

test.run();
