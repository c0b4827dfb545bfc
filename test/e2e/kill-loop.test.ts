// kill -9 of the real agent in the middle of a mixed write workload, five rounds on one data
// directory: after every kill `PRAGMA integrity_check` is ok and every acknowledged restart, device
// edit and audit row is in the metabase; after every start the pods are adopted. The workload and
// its checks are test/helpers/kill-loop.ts; `npm run soak` runs more rounds.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runKillLoop } from '../helpers/kill-loop.ts';
import { labOrSkip } from '../helpers/lab.ts';
import { ensureBundle } from '../helpers/outpost-process.ts';

const lab = await labOrSkip('test/e2e/kill-loop.test.ts');
if (lab) {
  ensureBundle();
  test('five kill -9 rounds over restarts, device edits and audit rows: sound, nothing acknowledged lost', async () => {
    const r = await runKillLoop({ lab, iterations: 5 });
    assert.is(r.rounds, 5);
    assert.ok(r.restartsAcked > 0, 'restarts were acknowledged');
    assert.ok(r.editsAcked > 5, 'device edits were acknowledged');
  });
  test.after(() => lab.stop());
}
test.run();
