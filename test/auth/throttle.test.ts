// Failed authentication is throttled per source address, loopback included (issue 18, item 6):
// 2,000 wrong tokens from 127.0.0.1 used to answer 401 each, unthrottled.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createToken } from '#lib/auth/tokens.ts';
import { AuthThrottle, RateLimiter } from '#lib/http/limits.ts';
import { startTestAgent } from '../helpers/agent.ts';

test('AuthThrottle: 10 failures, then one attempt a second', () => {
  let now = 0;
  const t = new AuthThrottle(1, 10, () => now);
  for (let i = 0; i < 10; i++) {
    t.check('10.0.0.1');
    t.failed('10.0.0.1');
  }
  assert.throws(
    () => t.check('10.0.0.1'),
    (e: { code: number; details: { retryAfterSeconds: number } }) =>
      e.code === 429 && e.details.retryAfterSeconds === 1,
  );
  t.check('10.0.0.2'); // another source is not affected
  now += 1000;
  t.check('10.0.0.1');
});

test('RateLimiter (the same token buckets): a burst, then `rate` a second, per client', () => {
  let now = 0;
  const r = new RateLimiter(2, 4, () => now);
  for (let i = 0; i < 4; i++) r.take('a');
  assert.throws(
    () => r.take('a'),
    (e: { code: number; details: { retryAfterSeconds: number } }) =>
      e.code === 429 && e.details.retryAfterSeconds === 1,
  );
  r.take('b'); // another client has its own bucket
  now += 500; // one token back at 2/s
  r.take('a');
  assert.throws(() => r.take('a'));
  now += 10_000; // never more than the burst
  for (let i = 0; i < 4; i++) r.take('a');
  assert.throws(() => r.take('a'));
});

test('wrong tokens from loopback get 429 with Retry-After after 10 failures; others still pass', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-throttle-'));
  const tokens = join(dir, 'tokens');
  const good = createToken(tokens, 'alice', 'viewer');
  // A frozen clock: no attempt is given back while the test runs, however slow the machine.
  const agent = await startTestAgent({ flags: { tokensFile: tokens }, now: () => 1_000_000 });
  try {
    const codes: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 30; i++) {
      last = await fetch(`${agent.url}/api/v1/pods`, { headers: { authorization: `Bearer opt_wrong${i}` } });
      codes.push(last.status);
      await last.arrayBuffer();
    }
    assert.equal(codes.slice(0, 10), Array(10).fill(401));
    assert.equal(codes.slice(10), Array(20).fill(429));
    assert.is(last!.headers.get('retry-after'), '1');
    const body = (await (
      await fetch(`${agent.url}/api/v1/pods`, { headers: { authorization: `Bearer ${good}` } })
    ).json()) as { reason: string; message: string };
    assert.is(body.reason, 'TooManyRequests', 'the source waits, whatever it sends');
    assert.match(body.message, 'too many failed authentication attempts from 127.0.0.1');
    // Public paths answer regardless.
    assert.is((await fetch(`${agent.url}/healthz`)).status, 200);
  } finally {
    await agent.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
