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
import { kubectl, outpost, startTestAgent, type TestAgent } from '../helpers/agent.ts';

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
    assert.match(text, `server: ${agent.secureUrl}`);
    assert.match(text, 'certificate-authority-data: ');
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
    assert.match(again, `server: ${agent.secureUrl}`);
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

test('callers without credentials read non-secret objects over http; writes, logs and Secrets need the admin kubeconfig (https)', async () => {
  const agent = await startTestAgent();
  try {
    assert.ok(agent.secureUrl?.startsWith('https://'), agent.secureUrl);
    assert.is(new URL(agent.secureUrl!).port, new URL(agent.url).port, 'one port for both');
    // kubectl (client-go) with the admin kubeconfig: https, the data directory's CA, the token.
    const created = await kubectl(agent.url, ['create', 'configmap', 'app', '--from-literal=a=1']);
    assert.is(created.code, 0, created.stderr);
    // Reads without credentials over plain http, kubectl's and curl's.
    const read = await kubectl(agent.url, ['get', 'configmap', 'app', '-o', 'name'], { anonymous: true });
    assert.is(read.stdout.trim(), 'configmap/app', read.stderr);
    assert.is((await fetch(`${agent.url}/api/v1/namespaces/default/configmaps/app`)).status, 200);
    // Anything else: 403, naming the admin kubeconfig.
    const refused = await kubectl(agent.url, ['delete', 'configmap', 'app'], { anonymous: true });
    assert.is(refused.code, 1);
    assert.match(refused.stderr, 'Forbidden');
    assert.match(refused.stderr, agent.kubeconfig);
    for (const [method, path] of [
      ['GET', '/api/v1/namespaces/default/secrets'],
      ['GET', '/api/v1/namespaces/default/pods/web/log'],
      ['POST', '/api/v1/namespaces/default/pods/web/exec?command=id'],
      ['GET', '/audit'],
    ] as const) {
      const res = await fetch(agent.url + path, { method });
      assert.is(res.status, 403, `${method} ${path}`);
      assert.is(((await res.json()) as { reason: string }).reason, 'Forbidden');
    }
    assert.ok(agent.store.objects.get('ConfigMap', 'default', 'app'), 'not deleted');
    // The dashboard reads without credentials (as a viewer) and offers the sign-in for the rest.
    const page = await (await fetch(`${agent.url}/ui/`, { headers: { accept: 'text/html' } })).text();
    assert.match(page, 'system:anonymous (viewer)');
    assert.match(page, 'href="/ui/login"');
    const signIn = await fetch(`${agent.url}/ui/login`, {
      method: 'POST',
      body: new URLSearchParams({ token: agent.token }),
      redirect: 'manual',
    });
    assert.is(signIn.status, 303, 'the admin token signs in to the dashboard');
    // The same token works over plain http too (curl's way), and over https with the CA.
    const del = await fetch(`${agent.url}/api/v1/namespaces/default/configmaps/app`, {
      method: 'DELETE',
      headers: agent.admin,
    });
    assert.is(del.status, 200);
  } finally {
    await agent.stop();
  }
});

test('--anonymous-role admin restores the old, insecure loopback behaviour; none answers 401', async () => {
  const open = await startTestAgent({ flags: { anonymousRole: 'admin' } });
  try {
    const res = await fetch(`${open.url}/api/v1/namespaces/default/pods/ghost`, { method: 'DELETE' });
    assert.is(res.status, 404, 'past authorization: no such pod');
  } finally {
    await open.stop();
  }
  const closed = await startTestAgent({ flags: { anonymousRole: 'none' } });
  try {
    assert.is((await fetch(`${closed.url}/api/v1/pods`)).status, 401);
    assert.is((await fetch(`${closed.url}/api/v1/pods`, { headers: closed.admin })).status, 200);
    assert.is((await fetch(`${closed.url}/readyz`)).status < 500, true, 'health stays public');
  } finally {
    await closed.stop();
  }
});

test.run();
