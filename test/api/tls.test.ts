// TLS, tokens and client certificates end to end, with the real kubectl and the outpost CLI.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startAgent } from '#lib/agent.ts';
import { createToken } from '#lib/auth/tokens.ts';
import { ConfigError, resolveServeConfig } from '#lib/config.ts';
import { silentLogger } from '#lib/log.ts';
import { outpost, run, startTestAgent, type TestAgent } from '../helpers/agent.ts';

const dir = mkdtempSync(join(tmpdir(), 'outpost-tls-'));
const f = (name: string) => join(dir, name);
const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

// A CA, a server certificate for 127.0.0.1, and client certificates carrying user (CN) and role (O).
ssl(
  'req',
  '-x509',
  '-newkey',
  'rsa:2048',
  '-nodes',
  '-keyout',
  'ca.key',
  '-out',
  'ca.pem',
  '-days',
  '2',
  '-subj',
  '/CN=outpost-test-ca',
);
writeFileSync(f('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
const issue = (name: string, subj: string, ext?: string) => {
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subj);
  ssl(
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    `${name}.pem`,
    '-days',
    '2',
    ...(ext ? ['-extfile', ext] : []),
  );
};
issue('server', '/CN=127.0.0.1', 'san.ext');
issue('carol', '/CN=carol/O=viewer');
const adminToken = createToken(f('tokens'), 'ada', 'admin');
const viewerToken = createToken(f('tokens'), 'vic', 'viewer');
writeFileSync(
  f('pods.yaml'),
  'apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: main, image: busybox:1.36}]}\n',
);

const home = mkdtempSync(join(tmpdir(), 'outpost-tls-home-'));
const kubectl = (args: string[]) =>
  run('kubectl', [`--cache-dir=${join(home, 'cache', String(Math.random()))}`, ...args], {
    env: { ...process.env, HOME: home },
  });

const t = suite('tls and authentication');
let agent: TestAgent;
t.before(async () => {
  const frozen = Date.now();
  agent = await startTestAgent({
    manifests: dir,
    now: () => frozen,
    flags: {
      tokensFile: f('tokens'),
      tlsCert: f('server.pem'),
      tlsKey: f('server.key'),
      clientCa: f('ca.pem'),
    },
  });
});
t.after(async () => {
  await agent.stop();
  rmSync(dir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

t('the server speaks https only', () => {
  assert.match(agent.url, /^https:\/\/127\.0\.0\.1:\d+$/);
});

t('kubectl with a kubeconfig carrying the token and the CA', async () => {
  const kubeconfig = f('kubeconfig');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\ncurrent-context: edge\nclusters:\n- name: edge\n  cluster:\n    server: ${agent.url}\n    certificate-authority: ${f('ca.pem')}\n` +
      `users:\n- name: ada\n  user:\n    token: ${adminToken}\ncontexts:\n- name: edge\n  context: {cluster: edge, user: ada}\n`,
  );
  const r = await kubectl([`--kubeconfig=${kubeconfig}`, 'get', 'pods']);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /^NAME\s+READY\s+STATUS/);
  assert.match(r.stdout, /\nweb\s+0\/1\s+Pending/);
  const mine = await outpost(['get', 'pods', '--kubeconfig', kubeconfig]);
  assert.is(mine.stdout, r.stdout);
});

t('a client refuses a server it cannot verify, and Outpost refuses a bad token', async () => {
  const unverified = await outpost(['get', 'pods', '-s', agent.url, '--token', adminToken]);
  assert.is(unverified.code, 1);
  assert.match(
    unverified.stderr,
    /Unable to connect to the server: .*(self-signed|unable to verify|certificate)/i,
  );
  // (kubectl answers a 401 over https by prompting for a user name, so the 401 itself is checked with curl.)
  const curl = await run('curl', [
    '-sS',
    '--cacert',
    f('ca.pem'),
    '-H',
    'Authorization: Bearer opt_wrong',
    `${agent.url}/api/v1/pods`,
  ]);
  assert.equal(JSON.parse(curl.stdout), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Unauthorized',
    reason: 'Unauthorized',
    code: 401,
  });
  const bad = await outpost([
    'get',
    'pods',
    '-s',
    agent.url,
    '--certificate-authority',
    f('ca.pem'),
    '--token',
    'opt_wrong',
  ]);
  assert.is(bad.code, 1);
  assert.is(bad.stderr.trim(), 'Error from server (Unauthorized): Unauthorized');
});

t('a client certificate authenticates (CN user, O role) and the role is enforced', async () => {
  const cert = [
    '--certificate-authority',
    f('ca.pem'),
    '--client-certificate',
    f('carol.pem'),
    '--client-key',
    f('carol.key'),
  ];
  const r = await kubectl([
    `--server=${agent.url}`,
    `--certificate-authority=${f('ca.pem')}`,
    `--client-certificate=${f('carol.pem')}`,
    `--client-key=${f('carol.key')}`,
    'get',
    'pods',
    '-o',
    'name',
  ]);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, 'pod/web\n');
  const denied = await outpost(['restart', 'pod', 'web', '-s', agent.url, ...cert]);
  assert.is(denied.code, 1);
  assert.match(
    denied.stderr,
    'Error from server (Forbidden): User "carol" (role viewer) cannot POST /api/v1/namespaces/default/pods/web/restart: it needs role operator',
  );
  const viewer = await outpost([
    'restart',
    'pod',
    'web',
    '-s',
    agent.url,
    '--certificate-authority',
    f('ca.pem'),
    '--token',
    viewerToken,
  ]);
  assert.match(viewer.stderr, 'Error from server (Forbidden): User "vic" (role viewer)');
});

t('mutating calls land in the audit trail, readable by admins only', async () => {
  const admin = await outpost([
    'audit',
    '-s',
    agent.url,
    '--certificate-authority',
    f('ca.pem'),
    '--token',
    adminToken,
    '-o',
    'json',
  ]);
  assert.is(admin.code, 0, admin.stderr);
  const items = JSON.parse(admin.stdout).items as { user: string; code: number; path: string }[];
  assert.ok(
    items.some((i) => i.user === 'carol' && i.code === 403 && i.path.endsWith('/web/restart')),
    admin.stdout,
  );
  const viewer = await outpost([
    'audit',
    '-s',
    agent.url,
    '--certificate-authority',
    f('ca.pem'),
    '--token',
    viewerToken,
  ]);
  assert.is(viewer.code, 1);
  assert.match(viewer.stderr, 'Forbidden');
});

t('a non-loopback listener without authentication refuses to start unless told to', async () => {
  const config = resolveServeConfig({ listen: '0.0.0.0:0', dataDir: f('data-open'), logLevel: 'silent' }, {});
  let err: unknown;
  await startAgent(config, silentLogger, { runPods: false }).catch((e) => {
    err = e;
  });
  assert.ok(err instanceof ConfigError);
  assert.match((err as Error).message, 'callers without credentials would be viewers');
  // Callers without credentials get a 401 beyond loopback with --anonymous-role none: the admin
  // token (over the data directory's HTTPS) is the way in.
  const closed = await startAgent(
    resolveServeConfig(
      { listen: '0.0.0.0:0', dataDir: f('data-closed'), logLevel: 'silent', anonymousRole: 'none' },
      {},
    ),
    silentLogger,
    { runPods: false },
  );
  try {
    const url = closed.url.replace('0.0.0.0', '127.0.0.1');
    assert.is((await fetch(`${url}/api/v1/pods`)).status, 401);
  } finally {
    await closed.close();
  }
  const allowed = resolveServeConfig(
    { listen: '0.0.0.0:0', dataDir: f('data-open'), logLevel: 'silent', insecureAllowUnauthenticated: true },
    {},
  );
  const open = await startAgent(allowed, silentLogger, { runPods: false });
  await open.close();
});

t.run();
