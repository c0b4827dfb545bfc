// Node's process metrics as the agent registers them: the same series as prom-client's
// collectDefaultMetrics (so that an upgrade adding or dropping one is seen here), the loop's lag
// from Outpost's sampler.
import { collectDefaultMetrics, Registry } from 'prom-client';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { registerProcessMetrics } from '#lib/process-metrics.ts';

const names = async (r: Registry) => (await r.getMetricsAsJSON()).map((m) => `${m.name} ${m.type}`).sort();

test("the same metric names and types as prom-client's collectDefaultMetrics", async () => {
  const theirs = new Registry();
  collectDefaultMetrics({ register: theirs });
  const ours = new Registry();
  const stop = registerProcessMetrics(ours);
  try {
    assert.equal(await names(ours), await names(theirs));
    assert.ok((await names(ours)).includes('nodejs_eventloop_lag_p99_seconds gauge'));
  } finally {
    stop();
  }
});

test('a scrape reports the loop stalls since the previous one', async () => {
  const r = new Registry();
  const stop = registerProcessMetrics(r);
  try {
    await r.metrics(); // starts a window
    await new Promise((res) => setTimeout(res, 250));
    // 250 ms: longer than the sampler's 100 ms period by more than the 100 ms asserted, so the
    // tick that falls due inside the stall is at least 150 ms late wherever in its period the stall
    // starts (a 150 ms stall left it 100 ms late at best, and CI once saw 99.7).
    const until = performance.now() + 250;
    while (performance.now() < until) {
      // the loop is blocked
    }
    await new Promise((res) => setTimeout(res, 150));
    const text = await r.metrics();
    const max = Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1]);
    assert.ok(max >= 0.1, `nodejs_eventloop_lag_max_seconds ${max} after a 250 ms stall`);
    assert.match(text, /^nodejs_eventloop_lag_seconds \d/m);
    assert.match(text, /^process_cpu_seconds_total \d/m);
  } finally {
    stop();
  }
});

test.run();
