import pino from 'pino';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ManualClock, settle } from '#lib/clock.ts';
import { ExitCode, FatalError } from '#lib/supervisor/exit-codes.ts';
import { type Logger, type ModuleSnapshot, type ModuleSpec, Supervisor } from '#lib/supervisor/modules.ts';

const CURVE = [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000];

interface Entry {
  level: string;
  obj: Record<string, unknown>;
  msg: string | undefined;
}

function setup() {
  const clock = new ManualClock(1_000_000);
  const logs: Entry[] = [];
  const at = (level: string) => (obj: object, msg?: string) =>
    void logs.push({ level, obj: { ...obj }, msg });
  const log: Logger = { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') };
  const fatals: FatalError[] = [];
  const sup = new Supervisor({ clock, log, onFatal: (err) => void fatals.push(err) });
  const snap = (name: string): ModuleSnapshot => sup.snapshot().find((m) => m.name === name)!;
  return { clock, logs, fatals, sup, snap };
}

/** Runs the clock forward, one timer at a time, until `name` has restarted `restarts` times;
 * returns each backoff delay as the snapshot announced it (nextRetryAt minus entering backoff). */
async function drive(s: ReturnType<typeof setup>, name: string, restarts: number): Promise<number[]> {
  const delays: number[] = [];
  for (let guard = 0; guard < 500 && s.snap(name).restarts < restarts; guard++) {
    await settle();
    const m = s.snap(name);
    if (m.state === 'backoff') delays.push(m.nextRetryAt! - m.since);
    const next = s.clock.nextAt();
    if (next === undefined) break;
    await s.clock.advanceAsync(next - s.clock.now());
  }
  await settle();
  return delays;
}

/** A body that marks itself ready and runs until aborted. */
const untilAborted: ModuleSpec['run'] = (ctx) =>
  new Promise<void>((resolve) => {
    ctx.ready();
    ctx.signal.addEventListener('abort', () => resolve());
  });

test('a module that throws is restarted along the curve', async () => {
  const s = setup();
  let runs = 0;
  s.sup.register({
    name: 'thrower',
    policy: 'OnFailure',
    run: () => {
      runs++;
      throw new Error('boom');
    },
  });
  s.sup.start();
  assert.equal(await drive(s, 'thrower', 7), CURVE);
  assert.is(runs, 8);
  assert.is(s.snap('thrower').restarts, 7);
  assert.is(s.snap('thrower').lastError, 'boom');
});

test('a module whose promise rejects is restarted along the curve', async () => {
  const s = setup();
  s.sup.register({
    name: 'rejecter',
    policy: 'OnFailure',
    run: async (ctx) => {
      ctx.ready();
      throw new Error('socket gone');
    },
  });
  s.sup.start();
  assert.equal(await drive(s, 'rejecter', 7), CURVE);
  // Eight runs, eight failures: the last one is waiting out its backoff.
  const failed = s.logs.filter((l) => l.msg === 'module failed; restarting');
  assert.is(failed.length, 8);
  assert.equal(failed[2]!.obj.module, 'rejecter');
  assert.equal(failed[2]!.obj.delayMs, 4000);
});

test('a failure reported with ctx.fail from a timer aborts the run and restarts it', async () => {
  const s = setup();
  const aborted: unknown[] = [];
  s.sup.register({
    name: 'ticker',
    policy: 'OnFailure',
    run: (ctx) =>
      new Promise<void>((resolve) => {
        ctx.ready();
        s.clock.setTimeout(() => ctx.fail(new Error('tick failed')), 500);
        ctx.signal.addEventListener('abort', () => {
          aborted.push(ctx.signal.reason);
          resolve();
        });
      }),
  });
  s.sup.start();
  assert.equal(await drive(s, 'ticker', 7), CURVE);
  assert.is(aborted.length, 7);
  assert.is((aborted[0] as Error).message, 'tick failed');
  assert.is(s.snap('ticker').lastError, 'tick failed');
});

test('a health check failing failureThreshold times in a row counts as a failure', async () => {
  const s = setup();
  let checks = 0;
  s.sup.register({
    name: 'unhealthy',
    policy: 'OnFailure',
    run: untilAborted,
    health: {
      intervalMs: 100,
      failureThreshold: 3,
      check: () => {
        checks++;
        throw new Error('no answer');
      },
    },
  });
  s.sup.start();
  assert.equal(await drive(s, 'unhealthy', 7), CURVE);
  assert.is(checks, 3 * 7);
  assert.match(s.snap('unhealthy').lastError!, 'health check failed 3 times in a row: no answer');
});

test('a passing health check resets the failure count; a hanging one counts as failed', async () => {
  const s = setup();
  const answers = ['fail', 'fail', 'ok', 'fail', 'fail', 'hang', 'ok'];
  s.sup.register({
    name: 'flaky',
    policy: 'OnFailure',
    run: untilAborted,
    health: {
      intervalMs: 100,
      failureThreshold: 3,
      check: () => {
        const a = answers.shift() ?? 'ok';
        if (a === 'fail') throw new Error('no');
        if (a === 'hang') return new Promise<void>(() => {});
      },
    },
  });
  s.sup.start();
  await drive(s, 'flaky', 1);
  assert.is(s.snap('flaky').restarts, 1);
  assert.match(s.snap('flaky').lastError!, 'health check failed 3 times in a row: timed out after 100 ms');
  assert.is(answers.length, 1);
});

test('a module healthy for resetAfterMs starts the curve over', async () => {
  const s = setup();
  let runs = 0;
  s.sup.register({
    name: 'recovers',
    policy: 'OnFailure',
    run: async (ctx) => {
      runs++;
      if (runs !== 4) throw new Error(`attempt ${runs}`);
      ctx.ready();
      await new Promise<void>((resolve) => s.clock.setTimeout(resolve, 60_000));
      throw new Error('fell over after a healthy minute');
    },
  });
  s.sup.start();
  assert.equal(await drive(s, 'recovers', 5), [1000, 2000, 4000, 1000, 2000]);
});

test('one failure reported three ways (fail twice, then reject) counts once', async () => {
  const s = setup();
  s.sup.register({
    name: 'noisy',
    policy: 'OnFailure',
    run: (ctx) =>
      new Promise<void>((_, reject) => {
        ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
        ctx.fail(new Error('first'));
        ctx.fail(new Error('second'));
      }),
  });
  s.sup.start();
  await settle();
  assert.is(s.snap('noisy').state, 'backoff');
  assert.is(s.snap('noisy').lastError, 'first');
  assert.is(s.logs.filter((l) => l.msg === 'module failed; restarting').length, 1);
});

test('policies: Never does not restart, OnFailure restarts only failures, Always restarts returns', async () => {
  const s = setup();
  const runs: Record<string, number> = {};
  const spec = (name: string, policy: ModuleSpec['policy'], fail: boolean): ModuleSpec => ({
    name,
    policy,
    run: async () => {
      runs[name] = (runs[name] ?? 0) + 1;
      if (fail) throw new Error(`${name} broke`);
    },
  });
  s.sup.register(spec('never-fails', 'Never', true));
  s.sup.register(spec('never-returns', 'Never', false));
  s.sup.register(spec('onfailure-fails', 'OnFailure', true));
  s.sup.register(spec('onfailure-returns', 'OnFailure', false));
  s.sup.register(spec('always-returns', 'Always', false));
  s.sup.start();
  await drive(s, 'always-returns', 2);
  await drive(s, 'onfailure-fails', 2);
  assert.equal(runs['never-fails'], 1);
  assert.equal(s.snap('never-fails').state, 'degraded');
  assert.equal(runs['never-returns'], 1);
  assert.equal(s.snap('never-returns').state, 'stopped');
  assert.ok(runs['onfailure-fails']! >= 3);
  assert.equal(runs['onfailure-returns'], 1);
  assert.equal(s.snap('onfailure-returns').state, 'stopped');
  assert.ok(runs['always-returns']! >= 3);
  assert.is(s.snap('always-returns').lastError, undefined);
  assert.equal(s.fatals, []);
});

test('retry limit with onGiveUp degraded: the module is given up, the agent keeps running', async () => {
  const s = setup();
  s.sup.register({ name: 'steady', policy: 'Always', run: untilAborted });
  s.sup.register({
    name: 'optional',
    policy: 'OnFailure',
    maxRetries: 2,
    onGiveUp: 'degraded',
    run: async () => {
      throw new Error('no device');
    },
  });
  s.sup.start();
  assert.equal(await drive(s, 'optional', 3), [1000, 2000]);
  assert.is(s.snap('optional').state, 'degraded');
  assert.is(s.snap('optional').restarts, 2);
  assert.is(s.snap('steady').state, 'running');
  assert.equal(s.fatals, []);
});

test('retry limit on a critical module: onFatal with the gave-up exit code after all stopped', async () => {
  const s = setup();
  let steadyAbortedBeforeFatal = false;
  s.sup.register({ name: 'steady', policy: 'Always', run: untilAborted });
  s.sup.register({
    name: 'runtime',
    policy: 'OnFailure',
    critical: true,
    maxRetries: 1,
    run: async () => {
      throw new Error('containerd socket missing');
    },
  });
  s.sup.on('change', (m) => {
    if (m.name === 'steady' && m.state === 'stopped') steadyAbortedBeforeFatal = s.fatals.length === 0;
  });
  s.sup.start();
  await drive(s, 'runtime', 2);
  assert.is(s.fatals.length, 1);
  assert.is(s.fatals[0]!.exitCode, ExitCode.ModuleGaveUp);
  assert.match(s.fatals[0]!.message, 'module "runtime" gave up (retry limit 1 reached)');
  assert.is(s.snap('runtime').state, 'failed');
  assert.ok(steadyAbortedBeforeFatal);
});

test('FatalError from a module stops everything and reaches onFatal with its exit code', async () => {
  const s = setup();
  const order: string[] = [];
  s.sup.register({
    name: 'store',
    policy: 'Always',
    run: (ctx) =>
      new Promise<void>((resolve) => {
        ctx.ready();
        ctx.signal.addEventListener('abort', () => {
          order.push('store aborted');
          resolve();
        });
      }),
  });
  s.sup.register({
    name: 'config',
    policy: 'Always',
    run: async () => {
      throw new FatalError(ExitCode.InvalidConfig, 'invalid configuration: --port must be a number');
    },
  });
  s.sup.on('change', (m) => void order.push(`${m.name} ${m.state}`));
  s.sup.start();
  await settle();
  assert.is(s.fatals.length, 1);
  assert.is(s.fatals[0]!.exitCode, 2);
  assert.ok(order.indexOf('store aborted') > order.indexOf('config failed'));
  assert.is(s.snap('config').state, 'failed');
  assert.is(s.snap('config').restarts, 0);
  assert.is(s.snap('store').state, 'stopped');
  assert.is(s.clock.pending, 0, 'no restart scheduled');
});

test('stop() aborts and awaits modules one at a time in reverse registration order', async () => {
  const s = setup();
  const events: string[] = [];
  for (const name of ['store', 'runtime', 'api']) {
    s.sup.register({
      name,
      policy: 'Always',
      run: (ctx) =>
        new Promise<void>((resolve) => {
          ctx.ready();
          ctx.signal.addEventListener('abort', async () => {
            events.push(`abort ${name}`);
            await settle(2);
            events.push(`done ${name}`);
            resolve();
          });
        }),
    });
  }
  s.sup.start();
  await settle();
  await s.sup.stop();
  assert.equal(events, [
    'abort api',
    'done api',
    'abort runtime',
    'done runtime',
    'abort store',
    'done store',
  ]);
  assert.equal(
    s.sup.snapshot().map((m) => m.state),
    ['stopped', 'stopped', 'stopped'],
  );
  assert.is(s.clock.pending, 0);
});

test('stop() does not hang on a module that ignores its signal', async () => {
  const s = setup();
  s.sup.register({ name: 'stubborn', policy: 'Always', run: () => new Promise<void>(() => {}) });
  s.sup.start();
  let stopped = false;
  const stopping = s.sup.stop().then(() => (stopped = true));
  await settle();
  assert.not.ok(stopped);
  await s.clock.advanceAsync(10_000);
  await stopping;
  assert.ok(stopped);
  assert.ok(s.logs.some((l) => l.level === 'warn' && l.msg?.startsWith('module ignored abort')));
});

test('change events follow a module through starting, running, failed, backoff', async () => {
  const s = setup();
  const states: string[] = [];
  s.sup.on('change', (m) => void states.push(m.state));
  let runs = 0;
  s.sup.register({
    name: 'cri',
    policy: 'OnFailure',
    run: async (ctx) => {
      ctx.ready();
      if (++runs === 1) throw new Error('dial unix /run/containerd/containerd.sock: ENOENT');
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
    },
  });
  s.sup.start();
  await drive(s, 'cri', 1);
  assert.equal(states, ['starting', 'running', 'failed', 'backoff', 'starting', 'running']);
  const m = s.snap('cri');
  assert.is(m.restarts, 1);
  assert.is(m.lastErrorAt, 1_000_000);
  assert.is(m.since, 1_001_000);
  assert.is(m.nextRetryAt, undefined);
});

test('register() rejects a duplicate name; a module registered after start() starts at once', async () => {
  const s = setup();
  s.sup.start();
  s.sup.register({ name: 'late', policy: 'Always', run: untilAborted });
  assert.throws(
    () => s.sup.register({ name: 'late', policy: 'Always', run: untilAborted }),
    /already registered/,
  );
  assert.is(s.snap('late').state, 'running');
});

test('a pino logger satisfies the Logger interface', () => {
  const log: Logger = pino({ level: 'silent' });
  log.info({ module: 'x' }, 'compiles');
});

test('retryNow ends a backoff at once and keeps the streak; it is a no-op unless backing off', async () => {
  const s = setup();
  let runs = 0;
  let healthy = false;
  s.sup.register({
    name: 'waiter',
    policy: 'Always',
    run: async (ctx) => {
      runs++;
      if (!healthy) throw new Error('runtime absent');
      await untilAborted(ctx);
    },
  });
  s.sup.start();
  await drive(s, 'waiter', 2); // failed twice: now backing off 4 s
  await settle();
  assert.is(s.snap('waiter').state, 'backoff');
  assert.is(s.snap('waiter').nextRetryAt! - s.clock.now(), 4000);
  healthy = true;
  const before = s.clock.now();
  assert.ok(s.sup.retryNow('waiter'));
  await settle();
  assert.is(s.clock.now(), before, 'no time passed');
  assert.is(s.snap('waiter').state, 'running');
  assert.is(s.snap('waiter').restarts, 3);
  assert.is(runs, 4);
  assert.not.ok(s.sup.retryNow('waiter'), 'running: nothing to cut short');
  assert.not.ok(s.sup.retryNow('nope'), 'unknown module');
  assert.is(s.clock.pending, 0, 'the cancelled backoff timer is gone');
  healthy = false;
  await s.sup.stop();
});

test("a module's signal takes a listener per call in flight, however many, without Node's leak warning", async () => {
  const s = setup();
  const warnings: string[] = [];
  const onWarning = (w: Error) => void warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  try {
    s.sup.register({
      name: 'busy',
      policy: 'Always',
      run: (ctx) => {
        // 50 calls in flight at once, each listening for the abort, as the pods module's CRI calls.
        for (let i = 0; i < 50; i++) ctx.signal.addEventListener('abort', () => {}, { once: true });
        return untilAborted(ctx);
      },
    });
    s.sup.start();
    await settle();
    await new Promise((r) => setImmediate(r)); // process warnings are emitted on the next tick
    assert.is(s.snap('busy').state, 'running');
    assert.equal(warnings, []);
  } finally {
    process.off('warning', onWarning);
    await s.sup.stop();
  }
});

test.run();
