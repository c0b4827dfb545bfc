import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ManualClock } from '#lib/clock.ts';
import type { Pod } from '#lib/kube/types.ts';
import type { ExecFn, ProbeContainerStatus } from '#lib/pods/probes/index.ts';
import { ProbeManager } from '#lib/pods/probes/index.ts';

const check = (cmd: string, extra: object = {}) => ({
  exec: { command: [cmd] },
  periodSeconds: 10,
  ...extra,
});

function podWith(deleting = false): Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid: 'u1', ...(deleting && { deletionTimestamp: 'now' }) },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'app:1',
          startupProbe: check('started', { failureThreshold: 5 }),
          readinessProbe: check('ready', { failureThreshold: 1 }),
          livenessProbe: check('alive'),
        },
        { name: 'plain', image: 'plain:1' },
      ],
    },
    status: { podIP: '10.0.0.2', hostIP: '10.0.0.1' },
  };
}

function setup() {
  const clock = new ManualClock();
  const calls: { at: number; id: string; cmd: string }[] = [];
  const codes = new Map<string, number>();
  const exec: ExecFn = async (id, cmd) => {
    const name = cmd.join(' ');
    calls.push({ at: clock.now(), id, cmd: name });
    const code = codes.get(name) ?? 0;
    return { stdout: '', stderr: code ? `${name}: no` : '', exitCode: code };
  };
  const changes: string[] = [];
  const kills: unknown[][] = [];
  const events: string[] = [];
  const m = new ProbeManager({
    exec,
    clock,
    onChange: (uid) => changes.push(uid),
    onLivenessFailure: (...args) => kills.push(args),
    onEvent: (uid, type, reason, message, container) =>
      events.push(`${uid} ${type} ${reason} ${container}: ${message}`),
  });
  const of = (cmd: string) => calls.filter((c) => c.cmd === cmd);
  return { clock, calls, codes, m, changes, kills, events, of };
}

const running = (app: string | null, plain: string | null = 'p1', at = 0): ProbeContainerStatus[] => [
  ...(app ? [{ name: 'app', containerId: app, running: true, startedAt: at }] : []),
  ...(plain
    ? [{ name: 'plain', containerId: plain, running: true, startedAt: new Date(at).toISOString() }]
    : []),
];

test('a container without probes is started and ready while it runs; not when it stops', () => {
  const { m } = setup();
  assert.not.ok(m.ready('u1', 'plain'));
  m.sync(podWith(), running(null));
  assert.ok(m.started('u1', 'plain'));
  assert.ok(m.ready('u1', 'plain'));
  m.sync(podWith(), [{ name: 'plain', containerId: 'p1', running: false }]);
  assert.not.ok(m.started('u1', 'plain'));
  assert.not.ok(m.ready('u1', 'plain'));
  assert.not.ok(m.ready('u2', 'plain'));
});

test('until the startup probe succeeds, liveness and readiness do not run; then readiness runs at once', async () => {
  const t = setup();
  t.codes.set('started', 1);
  t.m.sync(podWith(), running('a1'));
  await t.clock.advanceAsync(20_000);
  assert.is(t.of('started').length, 3);
  assert.equal([...t.of('ready'), ...t.of('alive')], []);
  assert.not.ok(t.m.started('u1', 'app'));
  assert.not.ok(t.m.ready('u1', 'app'));
  assert.equal(t.events, [
    'u1 Warning Unhealthy app: Startup probe failed: started: no',
    'u1 Warning Unhealthy app: Startup probe failed: started: no',
    'u1 Warning Unhealthy app: Startup probe failed: started: no',
  ]);
  t.codes.set('started', 0);
  await t.clock.advanceAsync(10_000);
  assert.ok(t.m.started('u1', 'app'));
  assert.equal(
    t.of('ready').map((c) => c.at),
    [30_000],
  );
  assert.ok(t.m.ready('u1', 'app'));
  assert.equal(t.changes, ['u1', 'u1'], 'started, then ready');
  await t.clock.advanceAsync(10_000);
  // Liveness keeps its own 10 s grid; its first run is its first tick after the startup success.
  assert.equal(
    t.of('alive').map((c) => [c.at, c.id]),
    [
      [30_000, 'a1'],
      [40_000, 'a1'],
    ],
  );
  t.m.stopAll();
});

test('readiness flips back and forth with an Unhealthy event per failed probe', async () => {
  const t = setup();
  t.m.sync(podWith(), running('a1'));
  await t.clock.advanceAsync(0);
  assert.ok(t.m.ready('u1', 'app'));
  t.codes.set('ready', 1);
  await t.clock.advanceAsync(20_000);
  assert.not.ok(t.m.ready('u1', 'app'));
  assert.equal(
    t.events.filter((e) => e.includes('Readiness')),
    [
      'u1 Warning Unhealthy app: Readiness probe failed: ready: no',
      'u1 Warning Unhealthy app: Readiness probe failed: ready: no',
    ],
  );
  t.codes.set('ready', 0);
  await t.clock.advanceAsync(10_000);
  assert.ok(t.m.ready('u1', 'app'));
  assert.is(t.changes.length, 4, 'started, ready, not ready, ready');
  t.m.stopPod('u1');
  assert.is(t.clock.pending, 0);
  assert.not.ok(t.m.ready('u1', 'app'));
});

test('a liveness failure fires once per container instance; a replaced container gets fresh workers', async () => {
  const t = setup();
  t.codes.set('alive', 1);
  t.m.sync(podWith(), running('a1'));
  await t.clock.advanceAsync(60_000);
  assert.equal(t.kills, [['u1', 'app', 'a1', 'alive: no', 'liveness']]);
  assert.is(t.of('alive').length, 3, 'held after the third failure');
  t.m.sync(podWith(), running('a1'));
  await t.clock.advanceAsync(30_000);
  assert.is(t.kills.length, 1, 'a re-sync of the same instance does not re-arm it');

  t.calls.length = 0;
  t.m.sync(podWith(), running('a2', 'p1', 90_000));
  assert.not.ok(t.m.started('u1', 'app'), 'the new instance has not passed its startup probe');
  await t.clock.advanceAsync(60_000);
  assert.ok(t.calls.every((c) => c.id === 'a2'));
  assert.equal(t.kills, [
    ['u1', 'app', 'a1', 'alive: no', 'liveness'],
    ['u1', 'app', 'a2', 'alive: no', 'liveness'],
  ]);
  t.m.stopAll();
  assert.is(t.clock.pending, 0);
});

test('a failed startup probe asks for a restart too', async () => {
  const t = setup();
  t.codes.set('started', 1);
  t.m.sync(podWith(), running('a1'));
  await t.clock.advanceAsync(100_000);
  assert.equal(t.kills, [['u1', 'app', 'a1', 'started: no', 'startup']]);
  assert.is(t.of('started').length, 5);
  t.m.stopAll();
});

test('a container that stops or goes away has its workers stopped', async () => {
  const t = setup();
  t.m.sync(podWith(), running('a1'));
  await t.clock.advanceAsync(0);
  t.m.sync(podWith(), [{ name: 'app', containerId: 'a1', running: false }]);
  const before = t.calls.length;
  await t.clock.advanceAsync(60_000);
  assert.is(t.calls.length, before);
  assert.is(t.clock.pending, 0);
  assert.not.ok(t.m.ready('u1', 'app'));
});

test('while the pod is deleted, liveness and startup stop and readiness carries on', async () => {
  const t = setup();
  t.codes.set('started', 1);
  t.m.sync(podWith(), running('a1'));
  await t.clock.advanceAsync(10_000);
  t.m.sync(podWith(true), running('a1'));
  await t.clock.advanceAsync(0);
  assert.ok(t.m.started('u1', 'app'));
  assert.ok(t.m.ready('u1', 'app'), 'readiness was triggered and succeeded');
  t.codes.set('alive', 1);
  await t.clock.advanceAsync(100_000);
  assert.equal(t.of('alive'), []);
  assert.is(t.of('started').length, 2);
  assert.equal(t.kills, []);
  t.m.stopAll();
});

test.run();
