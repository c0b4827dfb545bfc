import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ManualClock } from '#lib/clock.ts';
import { RECONNECT, reconnectDelay } from '#lib/cloud/backoff.ts';
import { CloudLink } from '#lib/cloud/link.ts';

test('reconnect delays start at 0.5 s, double, never pass 5 s, and are jittered', () => {
  const lo = Array.from({ length: 12 }, (_, i) => reconnectDelay(i, () => 0));
  const hi = Array.from({ length: 12 }, (_, i) => reconnectDelay(i, () => 1));
  assert.equal(lo.slice(0, 5), [500, 500, 1000, 2000, 2500]);
  assert.equal(hi.slice(0, 5), [500, 1000, 2000, 4000, 5000]);
  for (const d of [...lo, ...hi]) assert.ok(d >= RECONNECT.initialMs && d <= RECONNECT.maxMs, String(d));
  assert.equal(
    reconnectDelay(Number.POSITIVE_INFINITY, () => 0.5),
    500,
  );
  assert.equal(
    reconnectDelay(1000, () => 0.5),
    3750,
  );
});

test('the link starts offline, goes online on an answer and offline on a failure, telling listeners once', async () => {
  const clock = new ManualClock(1000);
  const link = new CloudLink(clock);
  const seen: string[] = [];
  link.onChange((s) => seen.push(s.state));
  assert.is(link.state, 'offline');
  assert.is(link.snapshot().lastContact, undefined);
  const waiting = link.waitOnline();
  clock.advance(500);
  link.markOnline();
  await waiting;
  link.markOnline();
  assert.equal(link.snapshot().lastContact, 1500);
  link.markOffline(new Error('ECONNREFUSED'));
  link.markOffline(new Error('again'));
  assert.equal(seen, ['online', 'offline']);
  assert.is(link.snapshot().lastError, 'again');
  assert.is(link.snapshot().lastContact, 1500);
});

test('waitOnline rejects when its signal aborts', async () => {
  const link = new CloudLink(new ManualClock());
  const ac = new AbortController();
  const p = link.waitOnline(ac.signal);
  ac.abort(new Error('stop'));
  await p.then(
    () => assert.unreachable('resolved'),
    (e: Error) => assert.is(e.message, 'stop'),
  );
});

test.run();
