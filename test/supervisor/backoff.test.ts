import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  type BackoffOptions,
  type BackoffState,
  backoffDelay,
  initialBackoffState,
  nextBackoff,
} from '#lib/supervisor/backoff.ts';

/** Feeds failures (and optional healthy periods) through the state machine; returns the decisions. */
function walk(steps: Array<'fail' | { healthyFor: number }>, opts: BackoffOptions = {}) {
  let state: BackoffState = initialBackoffState();
  let now = 0;
  const out: Array<number | 'giveUp'> = [];
  for (const step of steps) {
    if (step === 'fail') {
      const r = nextBackoff(state, { type: 'failure' }, now, opts);
      state = r.state;
      if (r.decision.action === 'retry') {
        out.push(r.decision.delayMs);
        now = r.decision.retryAt;
      } else out.push('giveUp');
    } else {
      state = nextBackoff(state, { type: 'healthy' }, now, opts).state;
      now += step.healthyFor;
    }
  }
  return out;
}

test('the default curve is 1, 2, 4, 8, 16, 30, 30 s', () => {
  assert.equal(
    [0, 1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n)),
    [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000],
  );
});

test('the curve takes initialMs, factor and maxMs, and a huge attempt stays capped', () => {
  assert.equal(
    [0, 1, 2, 3].map((n) => backoffDelay(n, { initialMs: 50, factor: 3, maxMs: 1000 })),
    [50, 150, 450, 1000],
  );
  assert.is(backoffDelay(10_000), 30_000);
  assert.is(backoffDelay(-3), 1000);
});

test('consecutive failures walk the curve', () => {
  assert.equal(walk(Array(7).fill('fail')), [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
});

test('a run healthy for resetAfterMs starts the curve over; a shorter one does not', () => {
  assert.equal(
    walk(['fail', 'fail', 'fail', { healthyFor: 60_000 }, 'fail', 'fail']),
    [1000, 2000, 4000, 1000, 2000],
  );
  assert.equal(walk(['fail', 'fail', 'fail', { healthyFor: 59_999 }, 'fail']), [1000, 2000, 4000, 8000]);
  assert.equal(
    walk(['fail', 'fail', { healthyFor: 500 }, 'fail'], { resetAfterMs: 500 }),
    [1000, 2000, 1000],
  );
});

test('an unhealthy report restarts the healthy period', () => {
  let state = initialBackoffState();
  for (let i = 0; i < 3; i++) state = nextBackoff(state, { type: 'failure' }, 0, {}).state;
  state = nextBackoff(state, { type: 'healthy' }, 0, {}).state;
  state = nextBackoff(state, { type: 'unhealthy' }, 50_000, {}).state;
  state = nextBackoff(state, { type: 'healthy' }, 50_001, {}).state;
  const r = nextBackoff(state, { type: 'failure' }, 70_000, {});
  assert.equal(r.decision, { action: 'retry', attempt: 4, delayMs: 8000, retryAt: 78_000 });
});

test('retry limit: gives up past maxRetries in one streak', () => {
  assert.equal(walk(['fail', 'fail', 'fail'], { maxRetries: 2 }), [1000, 2000, 'giveUp']);
  assert.equal(walk(['fail'], { maxRetries: 0 }), ['giveUp']);
});

test('retry limit: a healthy run in between gives the module its retries back', () => {
  assert.equal(walk(['fail', 'fail', { healthyFor: 60_000 }, 'fail', 'fail', 'fail'], { maxRetries: 2 }), [
    1000,
    2000,
    1000,
    2000,
    'giveUp',
  ]);
});

test('healthy is idempotent: the period counts from the first report', () => {
  let state = nextBackoff(initialBackoffState(), { type: 'failure' }, 0, {}).state;
  state = nextBackoff(state, { type: 'healthy' }, 1000, {}).state;
  state = nextBackoff(state, { type: 'healthy' }, 30_000, {}).state;
  assert.is(state.healthySince, 1000);
});

test.run();
