// The runtime's NetworkReady condition (CRI RuntimeStatus) as /readyz?verbose reports it: a note
// that never fails the check, since the API and host-network pods work without a pod network.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { describeNetwork, networkCondition, RuntimeNetwork } from '#lib/pods/runtime/network.ts';
import { testApp } from '../helpers/app.ts';

const status = (ready: boolean) => ({
  conditions: [
    { type: 'RuntimeReady', status: true, reason: '', message: '' },
    {
      type: 'NetworkReady',
      status: ready,
      reason: ready ? '' : 'NetworkPluginNotReady',
      message: ready ? '' : 'Network plugin returns error: cni plugin not initialized',
    },
  ],
  info: {},
});

test('NetworkReady is read from RuntimeStatus; a runtime without the condition leaves it unknown', () => {
  assert.equal(networkCondition(status(true)), { ready: true, reason: '', message: '' });
  assert.is(networkCondition({ conditions: [], info: {} }), undefined);
  const n = new RuntimeNetwork();
  n.update(status(false));
  assert.is(n.state?.ready, false);
});

test('/readyz?verbose says the network is not ready, and readyz still passes', async () => {
  const n = new RuntimeNetwork();
  n.update(status(false));
  const { app } = testApp({ runtimeNetwork: () => n.state });
  const res = await app.request('/readyz?verbose');
  const text = await res.text();
  assert.is(res.status, 200, text);
  assert.match(
    text,
    '[+]runtime-network ok (runtime NetworkReady=false (NetworkPluginNotReady: Network plugin returns error: cni plugin not initialized): only hostNetwork pods can start',
  );
  n.update(status(true));
  assert.match(
    await (await app.request('/readyz?verbose')).text(),
    describeNetwork({ ready: true, reason: '', message: '' }),
  );
  // Unknown (no runtime, or not asked yet): no check at all.
  const { app: none } = testApp();
  assert.not.match(await (await none.request('/readyz?verbose')).text(), 'runtime-network');
});

test.run();
