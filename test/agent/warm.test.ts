// When the agent says its start's code has run (AgentOptions.onWarm, when the serve script writes
// its code cache): after every part loaded and the first answer; without any request, after
// warmWithoutRequestMs; at close when neither came first. Always exactly once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestAgent } from '../helpers/agent.ts';

const until = async (what: string, ok: () => boolean, ms = 60_000) => {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

test('no request ever comes: onWarm is called once the wait without a request is over', async () => {
  let calls = 0;
  const agent = await startTestAgent({ agent: { onWarm: () => calls++, warmWithoutRequestMs: 200 } });
  try {
    await until('onWarm', () => calls > 0);
  } finally {
    await agent.stop();
  }
  assert.is(calls, 1, 'once, not again at close');
});

test('the first answer warms it; the wait without a request does not call it again', async () => {
  let calls = 0;
  const agent = await startTestAgent({ agent: { onWarm: () => calls++, warmWithoutRequestMs: 1_500 } });
  try {
    const res = await fetch(`${agent.url}/api/v1/pods`);
    assert.is(res.status, 200);
    await res.arrayBuffer();
    await until('onWarm', () => calls > 0);
    await new Promise((r) => setTimeout(r, 2_000)); // past the wait: no second call
  } finally {
    await agent.stop();
  }
  assert.is(calls, 1);
});

test('closed before any request and before the wait is over: onWarm is called at close, once', async () => {
  let calls = 0;
  const agent = await startTestAgent({ agent: { onWarm: () => calls++ } });
  assert.is(calls, 0, 'a minute has not passed and nobody asked');
  await agent.stop();
  assert.is(calls, 1);
});

test.run();
