// Loopback is not a trust boundary (issue 18, item 6), on the real containerd: a pod in the host
// network tries to exec into and restart another pod through 127.0.0.1 and is refused (403), while
// it may still read; the real kubectl with the admin kubeconfig (https on the same port) applies,
// execs and follows logs; curl reads over plain http; and only --anonymous-role admin brings back
// the old behaviour, where that same pod's exec goes through.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import { kubectl, run, startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { endLabSuite, labOrSkip, waitFor } from '../helpers/lab.ts';
import { onFreePort } from '../helpers/outpost-process.ts';

const lab = await labOrSkip('test/e2e/loopback-auth.test.ts');
if (lab) {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-loopback-'));
  const dataDir = join(dir, 'data');
  const ns = `loopback-${Math.random().toString(36).slice(2, 7)}`;
  const cri = new CriClient({ endpoint: lab.endpoint });
  const startOn = (port: number, flags: Record<string, unknown> = {}) =>
    startTestAgent({
      dataDir,
      runtimeEndpoint: lab.endpoint,
      nodeName: 'loopback-node',
      flags: { listen: `127.0.0.1:${port}`, ...flags },
    });
  // A free port (another one if that was taken before the agent bound it: its FatalError's exit
  // code 4). The restart below keeps it on purpose: the intruder pod's commands name this address.
  let port = 0;
  let agent: TestAgent = await onFreePort('loopback agent', (p) => {
    port = p;
    return startOn(p);
  });
  const start = (flags: Record<string, unknown>) => startOn(port, flags);
  const api = `http://127.0.0.1:${port}`;
  const container = (cmd: string) =>
    `  containers:\n    - name: main\n      image: ${lab.images.app}\n      imagePullPolicy: IfNotPresent\n      command: ["sh", "-c", ${JSON.stringify(cmd)}]\n`;
  // Every 2 s: a read, an exec into `victim` and a restart of it, each line saying how it went.
  const attempts = [
    `wget -q -O /dev/null ${api}/api/v1/namespaces/${ns}/pods && echo "READ ok" || echo "READ refused"`,
    `echo "EXEC $(wget -q -O- --header 'Content-Type: application/json' --post-data '{"command":["id","-u"]}' ${api}/pods/${ns}/victim/exec 2>&1)"`,
    `echo "RESTART $(wget -q -O- --post-data '' ${api}/api/v1/namespaces/${ns}/pods/victim/restart 2>&1)"`,
  ].join('; ');
  writeFileSync(
    join(dir, 'pods.yaml'),
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: victim\n  namespace: ${ns}\nspec:\n  terminationGracePeriodSeconds: 1\n${container('exec sleep 3600')}---\n` +
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: intruder\n  namespace: ${ns}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n${container(`while true; do ${attempts}; sleep 2; done`)}`,
  );
  const logs = async () => {
    const r = await kubectl(agent.url, ['-n', ns, 'logs', 'intruder']);
    return r.code === 0 ? r.stdout : '';
  };
  const running = (name: string) =>
    waitFor(() => agent.store.pods.get(ns, name)?.status?.phase === 'Running', 120_000, 250);

  test('kubectl with the admin kubeconfig applies over https; the pods run', async () => {
    const r = await kubectl(agent.url, ['apply', '-f', join(dir, 'pods.yaml')]);
    assert.is(r.code, 0, r.stderr);
    assert.ok(await running('victim'), JSON.stringify(agent.store.pods.get(ns, 'victim')?.status));
    assert.ok(await running('intruder'), JSON.stringify(agent.store.pods.get(ns, 'intruder')?.status));
  });

  test('a pod in the host network reads through 127.0.0.1 but its exec and restart are 403', async () => {
    const seen = await waitFor(
      async () => {
        const l = await logs();
        return /READ ok/.test(l) && /EXEC .*403/.test(l) && /RESTART .*403/.test(l) && l;
      },
      120_000,
      1000,
    );
    assert.ok(seen, `the intruder's attempts were not all answered:\n${await logs()}`);
    assert.not.match(seen, /EXEC 0/, 'no exec ran');
    // Nothing reached the victim: never restarted.
    assert.is(agent.store.pods.get(ns, 'victim')?.status?.containerStatuses?.[0]?.restartCount, 0);
    // The refusals are in the audit trail, as system:anonymous.
    const refused = agent.store.audit
      .list({ limit: 500 })
      .filter((e) => e.path === `/pods/${ns}/victim/exec` && e.code === 403);
    assert.ok(refused.length > 0, 'refused exec audited');
    assert.is(refused[0]!.user, 'system:anonymous');
  });

  test('the admin kubeconfig execs and follows logs over https; curl reads over http', async () => {
    const exec = await kubectl(agent.url, ['-n', ns, 'exec', 'victim', '--', 'id', '-u']);
    assert.is(exec.code, 0, exec.stderr);
    assert.is(exec.stdout.trim(), '0');
    const follow = await kubectl(agent.url, ['-n', ns, 'logs', '-f', 'intruder', '--tail', '1'], {
      untilStdout: /READ ok[\s\S]*READ ok/,
      timeoutMs: 120_000,
    });
    assert.match(follow.stdout, /READ ok[\s\S]*READ ok/, follow.stderr);
    const curl = await run('curl', ['-s', `${agent.url}/api/v1/namespaces/${ns}/pods/victim`]);
    assert.is(curl.code, 0);
    assert.is(JSON.parse(curl.stdout).metadata.name, 'victim');
    const refused = await run('curl', [
      '-s',
      '-X',
      'DELETE',
      `${agent.url}/api/v1/namespaces/${ns}/pods/victim`,
    ]);
    assert.is(JSON.parse(refused.stdout).code, 403);
    assert.match(JSON.parse(refused.stdout).message, agent.kubeconfig);
  });

  test('only --anonymous-role admin brings the old behaviour back: the same pod execs', async () => {
    await agent.close();
    agent = await start({ anonymousRole: 'admin' });
    const ran = await waitFor(async () => /EXEC .*"stdout":"0\\n"/.test(await logs()), 120_000, 1000);
    assert.ok(ran, `the intruder's exec never went through with --anonymous-role admin:\n${await logs()}`);
  });

  test.after(async () => {
    await endLabSuite({ agent, cri, ns, dir, lab });
  });
}
test.run();
