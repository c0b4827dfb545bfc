import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import type { Pod, PodCondition, PodStatus } from '#lib/kube/types.ts';
import { silentLogger } from '#lib/log.ts';
import {
  RUNTIME_REACHABLE,
  RuntimeReachability,
  unreachableMessage,
} from '#lib/pods/runtime/reachability.ts';
import { createStore } from '#lib/store/index.ts';

const ENDPOINT = 'unix:///run/containerd/containerd.sock';
const ENOENT = new Error(
  `container runtime at ${ENDPOINT} is unavailable: No connection established. Last error: Error: connect ENOENT /run/containerd/containerd.sock. Resolution note: `,
);

/** A pod bound to `nodeName` (edge-1 is this node). */
const podOn = (name: string, nodeName = 'edge-1', resources?: object): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { nodeName, containers: [{ name: 'main', image: 'busybox', ...(resources ? { resources } : {}) }] },
});

function setup() {
  let t = Date.parse('2026-03-01T10:00:00Z');
  const now = () => t;
  const store = createStore(openMetabase(':memory:'), { host: 'edge-1', now });
  const pod = podOn;
  store.pods.put(pod('web'), 'manifest');
  store.pods.put(pod('db', 'edge-1', { limits: { cpu: '1', memory: '1Gi' } }), 'manifest');
  store.pods.put(pod('elsewhere', 'edge-2'), 'api');
  const reach = new RuntimeReachability({
    store,
    nodeName: 'edge-1',
    endpoint: ENDPOINT,
    now,
    log: silentLogger,
  });
  const cond = (name: string): PodCondition | undefined =>
    store.pods.get('default', name)?.status?.conditions?.find((c) => c.type === RUNTIME_REACHABLE);
  const uid = (name: string) => store.pods.record('default', name)!.uid;
  return { store, reach, cond, uid, advance: (ms: number) => (t += ms) };
}

/** What the lifecycle manager writes: a whole status of its own conditions, nothing else. */
const managerStatus = (phase: 'Pending' | 'Running'): PodStatus => ({
  phase,
  qosClass: 'BestEffort',
  conditions: [{ type: 'Ready', status: phase === 'Running' ? 'True' : 'False' }],
  containerStatuses: [],
});

test('runtime down: every pod of the node gets RuntimeReachable False naming the endpoint; others untouched', () => {
  const s = setup();
  assert.is(s.cond('web'), undefined, 'nothing before the first attempt');
  s.reach.down(ENOENT);
  assert.is(s.reach.reachable, false);
  const c = s.cond('web')!;
  assert.is(c.status, 'False');
  assert.is(c.reason, 'RuntimeUnavailable');
  assert.is(
    c.message,
    `container runtime at ${ENDPOINT} is unreachable (the socket does not exist); container states shown are the last known`,
  );
  assert.is(c.lastTransitionTime, '2026-03-01T10:00:00Z');
  // A pod nothing reported on yet is still Pending, with the QoS class its spec gives.
  const db = s.store.pods.get('default', 'db')!.status!;
  assert.is(db.phase, 'Pending');
  assert.is(db.qosClass, 'Guaranteed');
  assert.is(s.cond('elsewhere'), undefined, 'a pod bound to another node is not ours to mark');
});

test('the lifecycle manager rewriting the status does not drop the condition; a repeat changes nothing', () => {
  const s = setup();
  s.reach.down(ENOENT);
  const rv = s.store.rv.current;
  s.reach.down(ENOENT);
  assert.is(s.store.rv.current, rv, 'the same reason again writes nothing');
  s.advance(5000);
  s.store.pods.setStatus(s.uid('web'), managerStatus('Running'));
  const status = s.store.pods.get('default', 'web')!.status!;
  assert.is(status.phase, 'Running', "the manager's status is stored");
  assert.equal(
    status.conditions!.map((c) => `${c.type}=${c.status}`),
    ['Ready=True', `${RUNTIME_REACHABLE}=False`],
  );
  assert.is(s.cond('web')!.lastTransitionTime, '2026-03-01T10:00:00Z', 'no transition: the time stays');
});

test('runtime back: the condition turns True with a new transition time and carries no reason', () => {
  const s = setup();
  s.reach.down(ENOENT);
  s.advance(60_000);
  s.reach.up();
  const c = s.cond('web')!;
  assert.equal(c, {
    type: RUNTIME_REACHABLE,
    status: 'True',
    lastTransitionTime: '2026-03-01T10:01:00Z',
  });
  s.advance(1000);
  s.store.pods.setStatus(s.uid('web'), managerStatus('Running'));
  assert.is(s.cond('web')!.status, 'True', 'later writes carry True');
  s.reach.down(new Error('14 UNAVAILABLE: connect ECONNREFUSED /run/containerd/containerd.sock'));
  assert.match(s.cond('web')!.message!, /\(connect: ECONNREFUSED\)/);
});

test('before the runtime was ever tried, a status written keeps the condition it had', () => {
  const s = setup();
  s.reach.down(ENOENT);
  // A restarted agent: a new tracker over the same store, nothing tried yet.
  const fresh = new RuntimeReachability({
    store: s.store,
    nodeName: 'edge-1',
    endpoint: ENDPOINT,
    now: () => 0,
    log: silentLogger,
  });
  assert.is(fresh.reachable, undefined);
  s.store.pods.setStatus(s.uid('web'), managerStatus('Pending'));
  assert.is(s.cond('web')!.status, 'False');
});

test('a pod added while the runtime is down gets the condition at once; one added while it answers or for another node does not', () => {
  const s = setup();
  const add = (name: string, nodeName = 'edge-1') => s.store.pods.put(podOn(name, nodeName), 'api');
  add('early'); // before the runtime was tried: nothing known yet
  assert.is(s.cond('early'), undefined);
  s.reach.down(ENOENT);
  s.advance(5000);
  add('late');
  const c = s.cond('late')!;
  assert.equal([c.status, c.reason], ['False', 'RuntimeUnavailable']);
  assert.is(c.lastTransitionTime, '2026-03-01T10:00:00Z', 'since the outage began');
  assert.is(s.store.pods.get('default', 'late')!.status!.phase, 'Pending');
  add('away', 'edge-2');
  assert.is(s.cond('away'), undefined, 'a pod bound to another node is not ours to mark');
  s.reach.up();
  const rv = s.store.rv.current;
  add('fresh');
  assert.is(s.store.rv.current, rv + 1, 'while the runtime answers the lifecycle manager writes the status');
});

test('a pod added after the grace period is shown not ready (RuntimeUnreachable) at once', async () => {
  const { ManualClock } = await import('#lib/clock.ts');
  const clock = new ManualClock(Date.parse('2026-03-01T10:00:00Z'));
  const store = createStore(openMetabase(':memory:'), { host: 'edge-1', now: () => clock.now() });
  const reach = new RuntimeReachability({
    store,
    nodeName: 'edge-1',
    endpoint: ENDPOINT,
    now: () => clock.now(),
    clock,
    log: silentLogger,
  });
  reach.down(ENOENT);
  clock.advance(41_000);
  store.pods.put(podOn('new'), 'manifest');
  const conditions = store.pods.get('default', 'new')!.status!.conditions ?? [];
  const ready = conditions.find((c) => c.type === 'Ready');
  assert.equal([ready?.status, ready?.reason], ['False', 'RuntimeUnreachable']);
  assert.is(conditions.find((c) => c.type === RUNTIME_REACHABLE)?.status, 'False');
  reach.close();
});

test('unreachableMessage: errno in a few words, else the first sentence of the error', () => {
  assert.match(unreachableMessage('unix:///x', new Error('connect EACCES /x')), /\(connect: EACCES\)/);
  assert.is(
    unreachableMessage('unix:///x', new Error('container runtime at unix:///x not reachable within 5000 ms')),
    'container runtime at unix:///x is unreachable (not reachable within 5000 ms); container states shown are the last known',
  );
});

test('unreachable for 40 s: Ready and ContainersReady False (RuntimeUnreachable), no container ready; real status back when it answers', async () => {
  const { ManualClock } = await import('#lib/clock.ts');
  const clock = new ManualClock(Date.parse('2026-03-01T10:00:00Z'));
  const store = createStore(openMetabase(':memory:'), { host: 'edge-1', now: () => clock.now() });
  store.pods.put(podOn('web'), 'manifest');
  const uid = store.pods.record('default', 'web')!.uid;
  let recovered = 0;
  const reach = new RuntimeReachability({
    store,
    nodeName: 'edge-1',
    endpoint: () => ENDPOINT,
    now: () => clock.now(),
    clock,
    log: silentLogger,
    onRecovered: () => recovered++,
  });
  const running: PodStatus = {
    phase: 'Running',
    qosClass: 'BestEffort',
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'ContainersReady', status: 'True' },
    ],
    containerStatuses: [{ name: 'main', ready: true, restartCount: 0, image: 'busybox', imageID: '' }],
  } as PodStatus;
  reach.up();
  store.pods.setStatus(uid, running);
  const status = () => store.pods.get('default', 'web')!.status!;
  const ready = () => status().conditions?.find((c) => c.type === 'Ready');

  reach.down(ENOENT);
  clock.advance(39_000);
  assert.is(ready()?.status, 'True', 'within the grace period the last known status stands');
  clock.advance(1_000);
  assert.is(ready()?.status, 'False');
  assert.is(ready()?.reason, 'RuntimeUnreachable');
  assert.match(ready()?.message ?? '', 'unreachable since 2026-03-01T10:00:00Z');
  assert.is(status().conditions?.find((c) => c.type === 'ContainersReady')?.reason, 'RuntimeUnreachable');
  assert.is(status().containerStatuses?.[0]?.ready, false);
  assert.is(status().phase, 'Running', 'the phase is the last known one');
  // The lifecycle manager's writes while unreachable keep the marking.
  store.pods.setStatus(uid, running);
  assert.is(ready()?.reason, 'RuntimeUnreachable');

  reach.up();
  assert.is(recovered, 1, 'the manager is asked for the real status');
  store.pods.setStatus(uid, running); // what the manager writes then
  assert.is(ready()?.status, 'True');
  assert.is(status().containerStatuses?.[0]?.ready, true);
  // A short outage after that does not mark anything.
  reach.down(ENOENT);
  clock.advance(10_000);
  reach.up();
  clock.advance(60_000);
  assert.is(ready()?.status, 'True');
  assert.is(recovered, 1);
  reach.close();
});

test('a restart while the runtime is still down, after the pods were shown not ready, rewrites nothing', async () => {
  const { ManualClock } = await import('#lib/clock.ts');
  const clock = new ManualClock(Date.parse('2026-03-01T10:00:00Z'));
  const store = createStore(openMetabase(':memory:'), { host: 'edge-1', now: () => clock.now() });
  store.pods.put(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default' },
      spec: { nodeName: 'edge-1', containers: [{ name: 'main', image: 'busybox' }] },
    },
    'manifest',
  );
  const reachability = () =>
    new RuntimeReachability({
      store,
      nodeName: 'edge-1',
      endpoint: ENDPOINT,
      now: () => clock.now(),
      clock,
      log: silentLogger,
    });
  const first = reachability();
  first.down(ENOENT);
  clock.advance(40_000);
  const before = store.pods.get('default', 'web')!;
  assert.equal(
    before.status?.conditions?.map((c) => `${c.type}=${c.status}`),
    [`${RUNTIME_REACHABLE}=False`, 'Ready=False', 'ContainersReady=False'],
  );
  first.close();
  // The agent killed and started again on the same metabase: the runtime is still not there.
  clock.advance(5_000);
  const second = reachability();
  second.down(ENOENT);
  clock.advance(40_000);
  assert.equal(store.pods.get('default', 'web'), before, 'same status, same resourceVersion');
  second.close();
});

test('the warning says what is awaited and how to fix it, once per outage, without a stack', async () => {
  const lines: { obj: Record<string, unknown>; msg: string }[] = [];
  const log = {
    ...silentLogger,
    warn: (obj: Record<string, unknown>, msg: string) => lines.push({ obj, msg }),
  } as unknown as typeof silentLogger;
  const store = createStore(openMetabase(':memory:'), { host: 'edge-1' });
  const reach = new RuntimeReachability({
    store,
    nodeName: 'edge-1',
    endpoint: ENDPOINT,
    watching: [ENDPOINT, 'unix:///run/crio/crio.sock'],
    now: () => 0,
    log,
    unreachableGraceMs: 3_600_000,
  });
  reach.down(ENOENT);
  reach.down(new Error(`container runtime at ${ENDPOINT} is unavailable: connect ECONNREFUSED`));
  reach.down(ENOENT);
  assert.is(lines.length, 1, JSON.stringify(lines));
  assert.match(lines[0]!.msg, 'waiting for a container runtime');
  assert.match(lines[0]!.msg, 'unix:///run/crio/crio.sock');
  assert.match(lines[0]!.msg, 'npm run lab');
  assert.not.ok('err' in lines[0]!.obj, 'no error object, so no stack');
  reach.close();
});

test.run();
