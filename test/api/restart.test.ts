// POST .../pods/{name}/restart and keadm's POST .../pods/restart through app.request() over a fake
// runtime: what reaches the runtime (label filter, stops, never the sandbox), the registry the
// lifecycle manager reads, the event, and the Status codes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import { createApp } from '#lib/app.ts';
import { requiredRole } from '#lib/auth/policy.ts';
import type { CriClient } from '#lib/cri/client.ts';
import type { Container, ContainerFilter } from '#lib/cri/types.ts';
import { notFound, unavailable } from '#lib/kube/status.ts';
import type { Pod } from '#lib/kube/types.ts';
import { silentLogger } from '#lib/log.ts';
import { RestartRequests } from '#lib/pods/worker/restart-requests.ts';
import { createStore } from '#lib/store/index.ts';

const NOW = Date.parse('2026-03-01T10:00:00Z');
const store = createStore(openMetabase(':memory:'), { host: 'edge-1', now: () => NOW });
const pod = (name: string, extra: Partial<Pod['metadata']> = {}) =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, ...extra },
    spec: { containers: [{ name: 'main', image: 'x' }] },
  }) as Pod;
for (const name of ['web', 'two', 'idle', 'flaky']) store.pods.put(pod(name), 'api');
store.pods.put(pod('leaving', { deletionTimestamp: '2026-03-01T10:00:30Z' }), 'api');

let running: { id: string; pod: string; container: string }[] = [];
let filters: ContainerFilter[] = [];
let stops: [string, number][] = [];
let down = false;
let failStop: Record<string, Error> = {};
const cri = {
  endpoint: 'unix:///run/fake.sock',
  async listContainers(f: ContainerFilter) {
    filters.push(f);
    if (down) throw unavailable('container runtime at unix:///run/fake.sock is unavailable: connect ENOENT');
    return running
      .filter((c) => `uid-${c.pod}` === f.labelSelector?.['io.kubernetes.pod.uid'])
      .map(
        (c) =>
          ({
            id: c.id,
            state: 'CONTAINER_RUNNING',
            labels: { 'io.kubernetes.container.name': c.container },
            metadata: { name: c.container, attempt: 0 },
          }) as unknown as Container,
      );
  },
  async stopContainer(id: string, timeout: number) {
    stops.push([id, timeout]);
    if (failStop[id]) throw failStop[id];
  },
  async stopPodSandbox() {
    throw new Error('a restart must never stop the sandbox');
  },
} as unknown as CriClient;
const restarts = new RestartRequests(() => NOW);
const deps = {
  store,
  log: silentLogger,
  now: () => NOW,
  nodeName: 'edge-1',
  shutdown: new AbortController().signal,
  health: () => [],
};
const app = createApp({ ...deps, cri, restarts });
const post = async (path: string, body?: string, a = app) => {
  const res = await a.request(path, { method: 'POST', ...(body === undefined ? {} : { body }) });
  return { code: res.status, body: (await res.json()) as Record<string, unknown> };
};
const reset = () => {
  running = [];
  filters = [];
  stops = [];
  down = false;
  failStop = {};
};

test('restart stops the running containers found by pod labels, marks them, records an event', async () => {
  reset();
  running = [
    { id: 'c1', pod: 'two', container: 'main' },
    { id: 'c2', pod: 'two', container: 'side' },
    { id: 'other', pod: 'web', container: 'main' },
  ];
  const r = await post('/api/v1/namespaces/default/pods/two/restart');
  assert.is(r.code, 200);
  assert.equal(r.body, {
    namespace: 'default',
    name: 'two',
    uid: 'uid-two',
    stopped: [
      { container: 'main', id: 'c1' },
      { container: 'side', id: 'c2' },
    ],
  });
  assert.equal(filters, [
    {
      labelSelector: {
        'io.kubernetes.pod.name': 'two',
        'io.kubernetes.pod.namespace': 'default',
        'io.kubernetes.pod.uid': 'uid-two',
      },
      state: { state: 'CONTAINER_RUNNING' },
    },
  ]);
  assert.equal(stops, [
    ['c1', 3],
    ['c2', 3],
  ]);
  assert.ok(restarts.take('c1') && restarts.take('c2'), 'the manager will restart both at once');
  assert.not.ok(restarts.take('c1'), 'a mark is answered once');
  const event = store.events.list({ involvedName: 'two' }).items.at(-1)!;
  assert.is(event.reason, 'Restarted');
  assert.is(event.type, 'Normal');
  assert.is(event.message, 'Restart requested: stopped containers main, side');
  assert.is(event.source.component, 'outpost');
  assert.is(event.involvedObject.uid, 'uid-two');
});

test('the short path /pods/{ns}/{name}/restart is the same operation', async () => {
  reset();
  running = [{ id: 'w1', pod: 'web', container: 'main' }];
  const r = await post('/pods/default/web/restart');
  assert.is(r.code, 200);
  assert.equal(r.body.stopped, [{ container: 'main', id: 'w1' }]);
});

test('unknown pod 404, nothing running 409, terminating 409: Status objects, nothing stopped', async () => {
  reset();
  const missing = await post('/api/v1/namespaces/default/pods/nope/restart');
  assert.is(missing.code, 404);
  assert.equal(missing.body, notFound('pods', 'nope').toStatus());
  const idle = await post('/api/v1/namespaces/default/pods/idle/restart');
  assert.is(idle.code, 409);
  assert.is(idle.body.reason, 'Conflict');
  assert.is(idle.body.message, 'pods "idle" cannot be restarted: none of its containers is running');
  const leaving = await post('/api/v1/namespaces/default/pods/leaving/restart');
  assert.is(leaving.code, 409);
  assert.is(leaving.body.message, 'pods "leaving" is terminating and cannot be restarted');
  assert.equal(stops, []);
});

test('runtime down 503 naming the endpoint; no runtime configured 503', async () => {
  reset();
  down = true;
  const r = await post('/api/v1/namespaces/default/pods/web/restart');
  assert.is(r.code, 503);
  assert.equal(r.body, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'pods "web" cannot be restarted: container runtime at unix:///run/fake.sock is unavailable',
    reason: 'ServiceUnavailable',
    code: 503,
    details: {
      name: 'web',
      kind: 'pods',
      causes: [
        {
          reason: 'RuntimeUnavailable',
          message: 'container runtime at unix:///run/fake.sock is unavailable: connect ENOENT',
        },
      ],
    },
  });
  const none = await post('/api/v1/namespaces/default/pods/web/restart', undefined, createApp(deps));
  assert.is(none.code, 503);
  assert.is(none.body.message, 'pods "web" cannot be restarted: no container runtime is configured');
  const unknown = await post('/api/v1/namespaces/default/pods/nope/restart', undefined, createApp(deps));
  assert.is(unknown.code, 404, 'an unknown pod is known to be unknown without a runtime');
});

test('a failed stop is withdrawn from the registry and answered with its code; a vanished container is skipped', async () => {
  reset();
  running = [
    { id: 'f1', pod: 'flaky', container: 'main' },
    { id: 'f2', pod: 'flaky', container: 'side' },
  ];
  failStop = { f2: new Error('boom') };
  const r = await post('/api/v1/namespaces/default/pods/flaky/restart');
  assert.is(r.code, 500);
  assert.is(r.body.message, 'Internal error occurred: Error: boom');
  assert.ok(restarts.take('f1'), 'the stopped one is still restarted at once');
  assert.not.ok(restarts.take('f2'));
  reset();
  running = [{ id: 'g1', pod: 'flaky', container: 'main' }];
  failStop = { g1: notFound('containers', 'g1') };
  const gone = await post('/api/v1/namespaces/default/pods/flaky/restart');
  assert.is(gone.code, 409, 'nothing was left to stop');
});

test('keadm POST .../pods/restart: RestartResponse, 200 only when all restarted, else the highest code', async () => {
  reset();
  running = [
    { id: 'w1', pod: 'web', container: 'main' },
    { id: 't1', pod: 'two', container: 'main' },
  ];
  const ok = await post('/api/v1/namespaces/default/pods/restart', '["web","two","web"]');
  assert.is(ok.code, 200);
  assert.equal(ok.body, { errMessages: [], LogMessages: ['w1', 't1'] });
  const mixed = await post('/api/v1/namespaces/default/pods/restart', '["nope","idle","web"]');
  assert.is(mixed.code, 409);
  assert.equal(mixed.body, {
    errMessages: [
      'pods "nope" not found',
      'pods "idle" cannot be restarted: none of its containers is running',
    ],
    LogMessages: ['w1'],
  });
  const missing = await post('/api/v1/namespaces/default/pods/restart', '["nope"]');
  assert.is(missing.code, 404);
  down = true;
  const unreachable = await post('/api/v1/namespaces/default/pods/restart', '["web","nope"]');
  assert.is(unreachable.code, 503);
});

test('keadm POST .../pods/restart: a body that is not a list of names is a 400/422 Status', async () => {
  reset();
  const notJson = await post('/api/v1/namespaces/default/pods/restart', '["web"');
  assert.is(notJson.code, 400);
  assert.is(notJson.body.reason, 'BadRequest');
  const object = await post('/api/v1/namespaces/default/pods/restart', '{"names":["web"]}');
  assert.is(object.code, 422);
  assert.is(object.body.message, 'RestartRequest is invalid: <body>: expected a JSON array of pod names');
  const empty = await post('/api/v1/namespaces/default/pods/restart', '[]');
  assert.is(empty.code, 422);
  assert.is(empty.body.message, 'RestartRequest is invalid: <body>: at least one pod name is required');
  const blank = await post('/api/v1/namespaces/default/pods/restart', '[""]');
  assert.is(blank.body.message, 'RestartRequest is invalid: [0]: a pod name must not be empty');
  assert.equal(stops, []);
});

test('a pod named "restart": GET, DELETE and its subresources address the pod, POST stays keadm\'s', async () => {
  reset();
  store.pods.put(pod('restart'), 'api');
  const path = '/api/v1/namespaces/default/pods/restart';
  for (const p of [path, `${path}/`, '/pods/default/restart']) {
    const res = await app.request(p);
    assert.is(res.status, 200, p);
    assert.is(((await res.json()) as Pod).metadata.name, 'restart', p);
  }
  // The roles follow the operation, not the word: reading it is a viewer's, deleting an operator's.
  assert.is(requiredRole('GET', path), 'viewer');
  assert.is(requiredRole('DELETE', path), 'operator');
  running = [{ id: 'r1', pod: 'restart', container: 'main' }];
  const own = await post(`${path}/restart`);
  assert.equal(
    [own.code, own.body.name, own.body.stopped],
    [200, 'restart', [{ container: 'main', id: 'r1' }]],
  );
  const keadm = await post(path, '["restart"]');
  assert.equal([keadm.code, keadm.body.errMessages], [200, []]);
  stops = [];
  const del = await app.request(path, { method: 'DELETE' });
  assert.is(del.status, 200);
  assert.is(((await del.json()) as Pod).metadata.name, 'restart');
  assert.equal(stops, [], 'a delete is not a restart');
  const after = store.pods.get('default', 'restart');
  assert.ok(!after || after.metadata.deletionTimestamp, 'deleted, or terminating');
});

test('registry: marks expire after ten minutes', () => {
  let now = 0;
  const r = new RestartRequests(() => now);
  r.mark(['old']);
  now = 11 * 60_000;
  r.mark(['new']);
  assert.is(r.size, 1);
  assert.ok(r.take('new'));
});

test.run();
