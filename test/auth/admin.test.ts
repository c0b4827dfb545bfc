// The data directory's admin credential (issue 18, item 6): made on the first start, root-only,
// kept across restarts; its token authenticates as the admin and the outpost CLI finds its kubeconfig by
// itself (kubectl sends tokens over HTTPS only); the unix socket beside the metabase makes its callers admins and is 0600.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { adminKubeconfigPath } from '#lib/auth/admin.ts';
import { outpost, startTestAgent, type TestAgent } from '../helpers/agent.ts';

const mode = (p: string) => statSync(p).mode & 0o777;

test('first start writes a root-only admin credential; it authenticates; a restart keeps it', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'outpost-admin-'));
  let agent = await startTestAgent({ dataDir });
  try {
    const kubeconfig = adminKubeconfigPath(dataDir);
    assert.is(mode(join(dataDir, 'auth')), 0o700);
    assert.is(mode(kubeconfig), 0o600);
    assert.is(mode(join(dataDir, 'auth', 'admin.tokens')), 0o600);
    const text = readFileSync(kubeconfig, 'utf8');
    assert.match(text, `server: ${agent.url}`);
    const token = /token: (\S+)/.exec(text)![1]!;
    assert.not.match(readFileSync(join(dataDir, 'auth', 'admin.tokens'), 'utf8'), token, 'only its hash');

    // The token authenticates as the admin (kubectl sends tokens only over HTTPS, so curl's way here).
    const del = await fetch(`${agent.url}/api/v1/namespaces/default/pods/ghost`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    });
    assert.is(del.status, 404);
    assert.is(agent.store.audit.list({ limit: 1 })[0]?.user, 'admin');
    // A wrong token is refused even on loopback.
    const wrong = await fetch(`${agent.url}/api/v1/pods`, { headers: { authorization: 'Bearer opt_wrong' } });
    assert.is(wrong.status, 401);

    // The outpost CLI finds the kubeconfig in OUTPOST_DATA_DIR by itself.
    const env = { ...process.env, OUTPOST_DATA_DIR: dataDir };
    const r = await outpost(['restart', 'pod', 'ghost', '-s', agent.url], { env });
    assert.match(r.stderr, /NotFound/);
    assert.is(agent.store.audit.list({ limit: 1 })[0]?.user, 'admin');

    // The unix socket: 0600, and its callers are admins.
    const sock = join(dataDir, 'outpost.sock');
    assert.is(mode(sock), 0o600);
    const pool = new Pool('http://localhost', { socketPath: sock });
    const res = await pool.request({ method: 'POST', path: '/api/v1/namespaces/default/pods/ghost/restart' });
    await res.body.text();
    await pool.close();
    assert.is(res.statusCode, 404);
    assert.is(agent.store.audit.list({ limit: 1 })[0]?.user, 'system:admin');

    await agent.close();
    agent = await startTestAgent({ dataDir });
    const again = readFileSync(kubeconfig, 'utf8');
    assert.is(/token: (\S+)/.exec(again)![1], token, 'the same credential after a restart');
    assert.match(again, `server: ${agent.url}`);
  } finally {
    await agent.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a start whose admin kubeconfig cannot be rewritten still serves, with the credential it had', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'outpost-admin-'));
  let agent: TestAgent | undefined = await startTestAgent({ dataDir });
  try {
    const token = /token: (\S+)/.exec(readFileSync(adminKubeconfigPath(dataDir), 'utf8'))![1]!;
    await agent.close();
    agent = undefined;
    // The rewrite goes through a temporary file beside the kubeconfig: a directory in its place
    // makes it fail as a full disk would.
    mkdirSync(`${adminKubeconfigPath(dataDir)}.tmp`);
    agent = await startTestAgent({ dataDir });
    const res = await fetch(`${agent.url}/api/v1/namespaces/default/pods/ghost`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    });
    assert.is(res.status, 404);
    assert.is(agent.store.audit.list({ limit: 1 })[0]?.user, 'admin');
  } finally {
    await agent?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
