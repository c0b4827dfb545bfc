// The event loop delay sampler behind nodejs_eventloop_lag_*: the window's figures, and a real
// stall of the loop seen by the real timer.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DelayWindow, sampleLoopDelay } from '#lib/loop-delay.ts';

const close = (actual: number, expected: number, what: string) =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual}, expected ${expected}`);

test('figures in seconds: min, max, mean, stddev and nearest-rank percentiles of the delays in ms', () => {
  const w = new DelayWindow();
  for (let ms = 1; ms <= 100; ms++) w.record(ms);
  const f = w.figures();
  close(f.min, 0.001, 'min');
  close(f.max, 0.1, 'max');
  close(f.mean, 0.0505, 'mean');
  close(f.stddev, Math.sqrt((100 * 100 - 1) / 12) / 1000, 'stddev');
  close(f.p50, 0.05, 'p50');
  close(f.p90, 0.09, 'p90');
  close(f.p99, 0.099, 'p99');
});

test('an empty window reads zeros; reset starts a new window; an early timer counts as no delay', () => {
  const w = new DelayWindow();
  assert.equal(w.figures(), { min: 0, max: 0, mean: 0, stddev: 0, p50: 0, p90: 0, p99: 0 });
  w.record(40);
  w.reset();
  w.record(-3);
  w.record(2);
  const f = w.figures();
  close(f.min, 0, 'min');
  close(f.max, 0.002, 'max');
  close(f.p99, 0.002, 'p99');
});

test('percentiles come from the latest delays once the ring is full; min and max from the whole window', () => {
  const w = new DelayWindow(4);
  for (const ms of [500, 1, 1, 1, 1, 2, 3, 4]) w.record(ms);
  const f = w.figures();
  close(f.max, 0.5, 'max');
  close(f.min, 0.001, 'min');
  close(f.p99, 0.004, 'p99 of the last four');
  close(f.p50, 0.002, 'p50 of the last four');
});

test('a stall of the loop shows in the sampled maximum, and stop ends the sampling', async () => {
  const s = sampleLoopDelay(10);
  await new Promise((r) => setTimeout(r, 30));
  const until = performance.now() + 150;
  while (performance.now() < until) {
    // the loop is blocked: the sampler's next tick comes at least ~140 ms late
  }
  await new Promise((r) => setTimeout(r, 30));
  assert.ok(s.figures().max >= 0.1, `max ${s.figures().max} s after a 150 ms stall`);
  s.reset();
  s.stop();
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(s.figures().max, 0, 'no tick after stop');
});

test.run();
