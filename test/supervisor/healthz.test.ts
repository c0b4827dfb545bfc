import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ManualClock, settle } from '#lib/clock.ts';
import {
  describeModule,
  formatDuration,
  moduleChecks,
  renderHealthz,
  renderModuleHealthz,
} from '#lib/supervisor/healthz.ts';
import { type ModuleSnapshot, Supervisor } from '#lib/supervisor/modules.ts';

const ok = (name: string) => ({ name, ok: true });

test('all passing: plain answer is "ok", verbose lists checks and "check passed"', () => {
  assert.equal(renderHealthz('healthz', [ok('store'), ok('api')], false), { status: 200, body: 'ok' });
  assert.equal(renderHealthz('livez', [ok('store'), ok('api')], true), {
    status: 200,
    body: '[+]store ok\n[+]api ok\nlivez check passed\n',
  });
});

test('a failure: plain answer withholds the reason the way the apiserver does', () => {
  const checks = [ok('store'), { name: 'runtime', ok: false, detail: 'backoff, restarts 3' }, ok('api')];
  assert.equal(renderHealthz('readyz', checks, false), {
    status: 500,
    body: '[+]store ok\n[-]runtime failed: reason withheld\n[+]api ok\nreadyz check failed\n',
  });
});

test('a failure, verbose: the detail is shown on one line', () => {
  const checks = [
    { name: 'runtime', ok: false, detail: 'failed, restarts 1, last error: line one\n  line two' },
  ];
  assert.equal(renderHealthz('healthz', checks, true), {
    status: 500,
    body: '[-]runtime failed: failed, restarts 1, last error: line one line two\nhealthz check failed\n',
  });
});

test('durations print Go-style', () => {
  assert.equal([850, 12_000, 125_000, 3_780_000, 7_200_000].map(formatDuration), [
    '850ms',
    '12s',
    '2m5s',
    '1h3m',
    '2h',
  ]);
});

const snap = (over: Partial<ModuleSnapshot> & { name: string }): ModuleSnapshot => ({
  state: 'running',
  critical: false,
  restarts: 0,
  since: 0,
  ...over,
});

test('describeModule names state, restarts, last error with its age, and the next retry', () => {
  const m = snap({
    name: 'runtime',
    state: 'backoff',
    restarts: 3,
    lastError: 'dial unix /run/containerd/containerd.sock: ENOENT',
    lastErrorAt: 10_000,
    nextRetryAt: 20_000,
  });
  assert.is(
    describeModule(m, 12_000),
    'backoff, restarts 3, last error: dial unix /run/containerd/containerd.sock: ENOENT (2s ago), next retry in 8s',
  );
});

test('readiness needs running; liveness only fails on failed; the default selection is all vs critical', () => {
  const modules = [
    snap({ name: 'store', critical: true }),
    snap({ name: 'runtime', state: 'backoff', critical: true, restarts: 1 }),
    snap({ name: 'dmi', state: 'degraded' }),
    snap({ name: 'sync', state: 'failed' }),
  ];
  const view = (kind: 'readyz' | 'livez') => moduleChecks(kind, modules, 0).map((c) => `${c.name}:${c.ok}`);
  assert.equal(view('readyz'), ['store:true', 'runtime:false', 'dmi:false', 'sync:false']);
  assert.equal(view('livez'), ['store:true', 'runtime:true']);
  const everyModule = moduleChecks('livez', modules, 0, { livez: () => true }).map(
    (c) => `${c.name}:${c.ok}`,
  );
  assert.equal(everyModule, ['store:true', 'runtime:true', 'dmi:true', 'sync:false']);
  const onlyStore = moduleChecks('readyz', modules, 0, { readyz: (m) => m.name === 'store' });
  assert.equal(onlyStore, [{ name: 'store', ok: true }]);
});

test('a live supervisor snapshot renders as /readyz?verbose', async () => {
  const clock = new ManualClock(0);
  const quiet = () => {};
  const sup = new Supervisor({
    clock,
    log: { info: quiet, warn: quiet, error: quiet, debug: quiet },
    onFatal: quiet,
  });
  sup.register({
    name: 'store',
    policy: 'Always',
    run: (ctx) =>
      new Promise<void>((resolve) => {
        ctx.ready();
        ctx.signal.addEventListener('abort', () => resolve());
      }),
  });
  sup.register({
    name: 'runtime',
    policy: 'OnFailure',
    run: async () => {
      throw new Error('dial unix /run/containerd/containerd.sock: ENOENT');
    },
  });
  sup.start();
  await settle();
  const res = renderModuleHealthz('readyz', sup.snapshot(), { verbose: true, now: clock.now() });
  assert.equal(res, {
    status: 500,
    body:
      '[+]store ok\n' +
      '[-]runtime failed: backoff, restarts 0, last error: dial unix /run/containerd/containerd.sock: ENOENT (0ms ago), next retry in 1s\n' +
      'readyz check failed\n',
  });
  assert.equal(renderModuleHealthz('livez', sup.snapshot(), { verbose: false, now: clock.now() }), {
    status: 200,
    body: 'ok',
  });
  await sup.stop();
});

test.run();
