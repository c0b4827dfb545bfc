// Debian's python3-kubernetes against Outpost on a real containerd (the lab): client-python.py
// runs ConfigMap and pod CRUD with the client's patch types, a watch (watch=True on the wire), logs,
// exec with stdin written as WebSocket text frames, and a device patched (a JSON merge patch, this client's only type for custom objects).
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import { run, startTestAgent } from '../helpers/agent.ts';
import { ci, endLabSuite, labOrSkip } from '../helpers/lab.ts';

const file = 'test/e2e/client-python.test.ts';
// Debian's package is installed for Debian's interpreter, not whatever python3 is first on PATH.
const python = '/usr/bin/python3';
const probe = await run(python, ['-c', 'import kubernetes; print(kubernetes.__version__)']).catch(
  (e: Error) => ({ code: 1, stdout: '', stderr: e.message }),
);
if (probe.code !== 0) {
  const msg = `python3-kubernetes is not installed (apt-get install python3-kubernetes; .ci/run does): ${probe.stderr.trim()}`;
  if (ci)
    test('python3-kubernetes is installed', () => {
      throw new Error(msg);
    });
  else {
    process.stderr.write(
      `\n!!! SKIPPING ${file}: ${msg}\n!!! The Python client is UNTESTED in this run.\n\n`,
    );
    test.skip(`${file} (no python3-kubernetes)`, () => {});
  }
}
const lab = probe.code === 0 ? await labOrSkip(file) : undefined;
if (lab) {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-client-python-'));
  for (const f of ['thermometer.yaml', 'thermometer-model.yaml'])
    copyFileSync(join(import.meta.dirname, '../../examples/manifests', f), join(dir, f));
  const agent = await startTestAgent({ manifests: dir, runtimeEndpoint: lab.endpoint });
  const cri = new CriClient({ endpoint: lab.endpoint });
  const ns = `pyclient-${Math.random().toString(36).slice(2, 7)}`;

  test('python3-kubernetes: ConfigMaps, pods, watch, logs, exec with text frames, a device', async () => {
    const r = await run(
      python,
      [join(import.meta.dirname, '../helpers/client-python.py'), agent.url, ns, lab.images.app],
      { timeoutMs: 600_000, env: { ...process.env, OUTPOST_TOKEN: agent.token } },
    );
    assert.is(r.code, 0, `client-python.py failed:\n${r.stderr}\n${r.stdout}`);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
    assert.is(out.cm_created, 'settings');
    assert.equal(out.cm_get, { a: '1' });
    assert.equal(out.cm_list, ['settings']);
    assert.equal(out.cm_strategic, { a: '1', b: '2' });
    assert.equal(out.cm_json, { b: '2' });
    assert.is(out.cm_after_delete, 404);
    assert.is(out.pod_created, 'talker');
    assert.equal(out.pod_list, ['talker']);
    assert.is(out.pod_strategic.step, 'strategic');
    assert.equal(out.pod_json, { by: 'json' });
    assert.match(out.logs, 'hello from python');
    assert.is(out.exec_open_at_end, false, 'the exec session ended');
    assert.is(out.exec_stdout, 'got ping\n');
    assert.is(out.exec_stderr, 'oops\n');
    assert.is(out.exec_returncode, 3);
    const types: string[] = out.events.map((e: { type: string }) => e.type);
    assert.is(types[0], 'ADDED', JSON.stringify(out.events));
    assert.is(types.at(-1), 'DELETED', JSON.stringify(out.events));
    assert.ok(
      types.slice(1, -1).every((t) => t === 'MODIFIED'),
      JSON.stringify(out.events),
    );
    assert.ok(
      out.events.some((e: { type: string; step: string }) => e.type === 'MODIFIED' && e.step === 'strategic'),
      JSON.stringify(out.events),
    );
    assert.is(out.device_kind, 'Device');
    assert.is(out.device_room, 'hall');
  });

  test.after(async () => {
    await endLabSuite({ agent, cri, ns, dir, lab });
  });
}
test.run();
