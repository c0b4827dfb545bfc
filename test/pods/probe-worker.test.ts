import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ManualClock } from '#lib/clock.ts';
import type { ExecFn, K8sProbe, ProbeResultChange, ProbeType } from '#lib/pods/probes/index.ts';
import { ProbeWorker } from '#lib/pods/probes/index.ts';

/** A fake ExecSync: the exit code of each command is set by the test; -1 throws, -2 never answers. */
function runtime(clock: ManualClock) {
  const calls: { at: number; id: string; cmd: string }[] = [];
  const codes = new Map<string, number>();
  const exec: ExecFn = async (id, cmd) => {
    const name = cmd.join(' ');
    calls.push({ at: clock.now(), id, cmd: name });
    const code = codes.get(name) ?? 0;
    if (code === -1) throw new Error('rpc error: code = NotFound desc = container is not running');
    if (code === -2) return new Promise(() => {});
    return { stdout: '', stderr: code ? `${name} says no` : '', exitCode: code };
  };
  return { calls, codes, exec, at: () => calls.map((c) => c.at) };
}

function worker(clock: ManualClock, type: ProbeType, probe: K8sProbe, startedAt?: number) {
  const rt = runtime(clock);
  const flips: ProbeResultChange[] = [];
  const thresholds: ProbeResultChange[] = [];
  const outcomes: string[] = [];
  const w = new ProbeWorker({
    type,
    containerName: 'app',
    probe: { exec: { command: ['check'] }, ...probe },
    target: { containerId: 'c1', podIP: '10.0.0.2', hostIP: '10.0.0.1', exec: rt.exec },
    clock,
    ...(startedAt !== undefined && { startedAt }),
    onResult: (c) => flips.push(c),
    onFailureThreshold: (c) => thresholds.push(c),
    onProbe: (a) => outcomes.push(a.outcome.result),
  });
  return { w, rt, flips, thresholds, outcomes, fail: (on: boolean) => rt.codes.set('check', on ? 1 : 0) };
}

test('the first probe waits initialDelaySeconds from the container start, then runs every period', async () => {
  const clock = new ManualClock(100_000);
  const { w, rt } = worker(clock, 'readiness', { initialDelaySeconds: 5, periodSeconds: 10 }, 98_000);
  await clock.advanceAsync(2_999);
  assert.equal(rt.at(), []);
  await clock.advanceAsync(1);
  assert.equal(rt.at(), [103_000]);
  await clock.advanceAsync(25_000);
  assert.equal(rt.at(), [103_000, 113_000, 123_000]);
  w.stop();
  await clock.advanceAsync(60_000);
  assert.is(rt.calls.length, 3);
  assert.is(clock.pending, 0);
});

test('defaults: no delay, 10 s period; a container that started long ago is probed at once', async () => {
  const clock = new ManualClock(500_000);
  const { w, rt } = worker(clock, 'liveness', { initialDelaySeconds: 30 }, 0);
  await clock.advanceAsync(0);
  assert.equal(rt.at(), [500_000]);
  await clock.advanceAsync(20_000);
  assert.equal(rt.at(), [500_000, 510_000, 520_000]);
  w.stop();
});

test('readiness starts not ready, flips after successThreshold successes and failureThreshold failures', async () => {
  const clock = new ManualClock();
  const r = worker(clock, 'readiness', { periodSeconds: 1, successThreshold: 2, failureThreshold: 2 });
  assert.is(r.w.result, 'failure');
  await clock.advanceAsync(0);
  assert.is(r.w.result, 'failure', 'one success of two');
  await clock.advanceAsync(1000);
  assert.is(r.w.result, 'success');
  r.fail(true);
  await clock.advanceAsync(1000);
  r.fail(false);
  await clock.advanceAsync(1000);
  r.fail(true);
  await clock.advanceAsync(1000);
  assert.is(r.w.result, 'success', 'failures were not consecutive');
  await clock.advanceAsync(1000);
  assert.is(r.w.result, 'failure');
  assert.equal(
    r.flips.map((f) => [f.result, f.consecutiveFailures, f.output]),
    [
      ['success', 0, ''],
      ['failure', 2, 'check says no'],
    ],
  );
  assert.equal(r.thresholds, [], 'readiness never asks for a restart');
  r.w.stop();
});

test('liveness starts alive, reports the failure threshold once, then holds', async () => {
  const clock = new ManualClock();
  const l = worker(clock, 'liveness', { periodSeconds: 5, failureThreshold: 3 });
  assert.is(l.w.result, 'success');
  l.fail(true);
  await clock.advanceAsync(5_000);
  assert.equal(l.rt.at(), [0, 5_000]);
  assert.equal(l.flips, [], 'two failures of three');
  await clock.advanceAsync(5_000);
  assert.equal(l.thresholds, [
    {
      type: 'liveness',
      containerName: 'app',
      result: 'failure',
      output: 'check says no',
      consecutiveFailures: 3,
    },
  ]);
  assert.equal(l.flips, l.thresholds);
  await clock.advanceAsync(60_000);
  assert.is(l.rt.calls.length, 3, 'no probing while held');
  assert.is(l.thresholds.length, 1);
  assert.ok(l.w.idle);
  assert.is(clock.pending, 0);
});

test('a probe that does not answer within timeoutSeconds counts as a failure on the clock', async () => {
  const clock = new ManualClock();
  const l = worker(clock, 'liveness', { periodSeconds: 10, timeoutSeconds: 2, failureThreshold: 2 });
  l.rt.codes.set('check', -2);
  await clock.advanceAsync(2_000);
  assert.equal(l.outcomes, ['failure']);
  await clock.advanceAsync(10_000);
  assert.equal(l.rt.at(), [0, 10_000]);
  assert.is(l.thresholds[0]?.output, 'command timed out: "check" timed out after 2s');
});

test('an errored probe is retried 3 times and thrown away, not counted', async () => {
  const clock = new ManualClock();
  const l = worker(clock, 'liveness', { periodSeconds: 1, failureThreshold: 1 });
  l.rt.codes.set('check', -1);
  await clock.advanceAsync(2_000);
  assert.equal(l.rt.at(), [0, 0, 0, 1000, 1000, 1000, 2000, 2000, 2000]);
  assert.equal(l.outcomes, ['unknown', 'unknown', 'unknown']);
  assert.is(l.w.result, 'success');
  assert.equal(l.thresholds, []);
  l.fail(true);
  await clock.advanceAsync(1_000);
  assert.is(l.thresholds.length, 1);
});

test('startup is undecided until it succeeds, needs one success whatever successThreshold says, then stops', async () => {
  const clock = new ManualClock();
  const s = worker(clock, 'startup', { periodSeconds: 2, successThreshold: 3, failureThreshold: 30 });
  assert.is(s.w.result, 'unknown');
  s.fail(true);
  await clock.advanceAsync(4_000);
  assert.is(s.w.result, 'unknown');
  s.fail(false);
  await clock.advanceAsync(2_000);
  assert.is(s.w.result, 'success');
  assert.equal(
    s.flips.map((f) => f.result),
    ['success'],
  );
  await clock.advanceAsync(20_000);
  assert.is(s.rt.calls.length, 4);
  assert.is(clock.pending, 0);
});

test('stop() cancels a probe in flight: no result, no event, no timers left', async () => {
  const clock = new ManualClock();
  const l = worker(clock, 'liveness', { failureThreshold: 1 });
  l.rt.codes.set('check', -2);
  await clock.advanceAsync(0);
  assert.is(l.rt.calls.length, 1);
  l.w.stop();
  await clock.advanceAsync(30_000);
  assert.equal(l.outcomes, []);
  assert.equal(l.thresholds, []);
  assert.is(clock.pending, 0);
});

test('a throwing callback is reported and probing goes on', async () => {
  const clock = new ManualClock();
  const errors: unknown[] = [];
  let calls = 0;
  const w = new ProbeWorker({
    type: 'readiness',
    containerName: 'app',
    probe: { exec: { command: ['check'] }, periodSeconds: 1 },
    target: {
      containerId: 'c1',
      podIP: '',
      hostIP: '',
      exec: async () => ({ stdout: '', stderr: '', exitCode: calls++ % 2 }),
    },
    clock,
    onProbe: () => {
      throw new Error('listener broke');
    },
    onError: (err) => errors.push((err as Error).message),
  });
  await clock.advanceAsync(2_000);
  assert.is(calls, 3);
  assert.equal(errors, ['listener broke', 'listener broke', 'listener broke']);
  w.stop();
});

test('trigger() probes at once, but not before the initial delay', async () => {
  const clock = new ManualClock();
  const r = worker(clock, 'readiness', { initialDelaySeconds: 5, periodSeconds: 10 });
  r.w.trigger();
  await clock.advanceAsync(1_000);
  assert.equal(r.rt.at(), []);
  await clock.advanceAsync(4_000);
  await clock.advanceAsync(3_000);
  r.w.trigger();
  await clock.advanceAsync(0);
  assert.equal(r.rt.at(), [5_000, 8_000]);
  await clock.advanceAsync(10_000);
  assert.equal(r.rt.at(), [5_000, 8_000, 18_000], 'the period restarts from the triggered run');
  r.w.stop();
});

test.run();
