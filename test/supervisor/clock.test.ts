import { getEventListeners } from 'node:events';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ManualClock, sleep, withTimeout } from '#lib/clock.ts';

test('advance fires due timers in due-time order, ties in creation order', () => {
  const clock = new ManualClock(1000);
  const fired: string[] = [];
  clock.setTimeout(() => fired.push(`c@${clock.now()}`), 300);
  clock.setTimeout(() => fired.push(`a@${clock.now()}`), 100);
  clock.setTimeout(() => fired.push(`b@${clock.now()}`), 100);
  clock.setTimeout(() => fired.push('late'), 301);
  clock.advance(300);
  assert.equal(fired, ['a@1100', 'b@1100', 'c@1300']);
  assert.is(clock.now(), 1300);
  assert.is(clock.pending, 1);
});

test('timers scheduled by a firing timer fire within the same advance; cleared ones never', () => {
  const clock = new ManualClock();
  const fired: number[] = [];
  const cleared = clock.setTimeout(() => fired.push(-1), 50);
  clock.setTimeout(() => {
    fired.push(clock.now());
    clock.setTimeout(() => fired.push(clock.now()), 20);
  }, 10);
  clock.clearTimeout(cleared);
  clock.advance(100);
  assert.equal(fired, [10, 30]);
  assert.is(clock.pending, 0);
});

test('advanceAsync lets promise callbacks schedule timers before time moves on', async () => {
  const clock = new ManualClock();
  const fired: number[] = [];
  clock.setTimeout(() => {
    void Promise.resolve().then(() => clock.setTimeout(() => fired.push(clock.now()), 5));
  }, 10);
  await clock.advanceAsync(20);
  assert.equal(fired, [15]);
});

test('withTimeout rejects on the injected clock and clears its timer on success', async () => {
  const clock = new ManualClock();
  const outcome = withTimeout(clock, new Promise<void>(() => {}), 100).then(
    () => 'resolved',
    (err: Error) => err.message,
  );
  await clock.advanceAsync(100);
  assert.is(await outcome, 'timed out after 100 ms');
  assert.is(await withTimeout(clock, Promise.resolve(7), 100), 7);
  assert.is(clock.pending, 0);
});

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

test('sleep raced against other work leaves no abort listener and no timer behind', async () => {
  const signal = new AbortController().signal;
  const before = timers();
  // What the outbox sender does on every push: a 60 s sleep that something else ends.
  for (let i = 0; i < 200; i++) await sleep(60_000, signal, Promise.resolve());
  assert.is(getEventListeners(signal, 'abort').length, 0);
  assert.ok(timers() < before + 200, `${timers() - before} timers left`);
  await sleep(60_000, signal, Promise.reject(new Error('ended by a failure'))); // never rejects
  assert.is(getEventListeners(signal, 'abort').length, 0);
});

test('sleep resolves on time, at abort, and at once on an aborted signal; listeners removed', async () => {
  const ac = new AbortController();
  await sleep(1, ac.signal);
  assert.is(getEventListeners(ac.signal, 'abort').length, 0);
  const long = sleep(60_000, ac.signal);
  assert.is(getEventListeners(ac.signal, 'abort').length, 1);
  ac.abort();
  await long;
  assert.is(getEventListeners(ac.signal, 'abort').length, 0);
  await sleep(60_000, ac.signal);
  await sleep(1);
});

test.run();
