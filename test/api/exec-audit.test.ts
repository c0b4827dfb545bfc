// The audit trail records a JSON-body exec with its command (it is in the body, not the query).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestAgent } from '../helpers/agent.ts';

test('POST /pods/{ns}/{name}/exec with a JSON body is audited with its command', async () => {
  const agent = await startTestAgent();
  try {
    const res = await fetch(`${agent.url}/pods/default/web/exec`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...agent.admin },
      body: JSON.stringify({ command: ['sh', '-c', 'echo hi'], container: 'main' }),
    });
    assert.is(res.status, 404, 'no such pod here; refused calls are audited too');
    const trail = (await (await fetch(`${agent.url}/audit`, { headers: agent.admin })).json()) as {
      items: { path: string; detail: unknown; code: number }[];
    };
    const entry = trail.items.find((i) => i.path === '/pods/default/web/exec');
    assert.ok(entry, JSON.stringify(trail));
    assert.equal(entry.detail, { command: ['sh', '-c', 'echo hi'], container: 'main' });
    assert.is(entry.code, 404);
  } finally {
    await agent.stop();
  }
});

test.run();
