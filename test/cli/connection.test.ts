// The CLI reads the admin kubeconfig Outpost writes without the YAML library (start-up time): the
// fast reader must give what the YAML parser gives for every form the writer produces, and leave
// anything else to the parser.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { adminKubeconfigPath, writeAdminKubeconfig } from '#lib/auth/admin.ts';
import { outpostKubeconfig, resolveConnection } from '#lib/cli/connection.ts';
import { outpost, startTestAgent } from '../helpers/agent.ts';

const dir = mkdtempSync(join(tmpdir(), 'outpost-connection-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const CA = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';

for (const [name, server, ca] of [
  ['https with its CA', 'https://127.0.0.1:10550', CA],
  ['http without a CA', 'http://127.0.0.1:10550', undefined],
  ['an IPv6 address', 'https://[::1]:8443', CA],
] as const) {
  test(`the admin kubeconfig as written (${name}) reads as YAML reads it`, async () => {
    const dataDir = join(dir, name.replace(/\W+/g, '-'));
    mkdirSync(join(dataDir, 'auth'), { recursive: true });
    writeAdminKubeconfig(dataDir, server, 'opt_abc-DEF_123~x.y', ca);
    const text = readFileSync(adminKubeconfigPath(dataDir), 'utf8');
    const fast = outpostKubeconfig(text);
    assert.ok(fast, 'the fast reader knows the written form');
    assert.equal(fast, parse(text));
    const conn = await resolveConnection({}, { OUTPOST_DATA_DIR: dataDir });
    assert.equal([conn.server, conn.token, conn.tls?.ca?.toString()], [server, 'opt_abc-DEF_123~x.y', ca]);
  });
}

test('anything else is left to the YAML parser', () => {
  const dataDir = join(dir, 'edited');
  mkdirSync(join(dataDir, 'auth'), { recursive: true });
  writeAdminKubeconfig(dataDir, 'https://127.0.0.1:10550', 'opt_x', CA);
  const text = readFileSync(adminKubeconfigPath(dataDir), 'utf8');
  assert.is(
    outpostKubeconfig(text.replace('current-context: admin@outpost', 'current-context: other')),
    undefined,
  );
  assert.is(outpostKubeconfig(`${text}# a comment\n`), undefined);
  assert.is(outpostKubeconfig(text.replace('token: opt_x', 'token: "opt_x"')), undefined);
});

// Any other kubeconfig goes through the reader `serve --cloud` uses: kubectl's rules, and a clear
// refusal of what the CLI cannot send.
const kubeconfig = (name: string, cluster: string, user: string, context = 'c') => {
  const d = join(dir, name);
  mkdirSync(join(d, 'certs'), { recursive: true });
  const path = join(d, 'config');
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters:
- name: k
  cluster:
${cluster}
users:
- name: u
  user:
${user}
contexts:
- name: c
  context: {cluster: k, user: u}
current-context: ${context}
`,
  );
  return { d, path };
};

test('a hand-written kubeconfig: files relative to its own directory, tls-server-name, insecure-skip-tls-verify', async () => {
  const { d, path } = kubeconfig(
    'relative',
    '    server: https://10.0.0.9:10550\n    certificate-authority: certs/ca.crt\n    tls-server-name: outpost',
    '    client-certificate: certs/me.crt\n    client-key: certs/me.key',
  );
  writeFileSync(join(d, 'certs', 'ca.crt'), CA);
  writeFileSync(join(d, 'certs', 'me.crt'), 'CERT');
  writeFileSync(join(d, 'certs', 'me.key'), 'KEY');
  const conn = await resolveConnection({ kubeconfig: path });
  assert.is(conn.server, 'https://10.0.0.9:10550');
  assert.equal(
    [conn.tls?.ca?.toString(), conn.tls?.cert?.toString(), conn.tls?.key?.toString(), conn.tls?.servername],
    [CA, 'CERT', 'KEY', 'outpost'],
  );
  const insecure = kubeconfig(
    'insecure',
    '    server: https://10.0.0.9:10550\n    insecure-skip-tls-verify: true',
    '    token: opt_t',
  );
  const c2 = await resolveConnection({ kubeconfig: insecure.path });
  assert.equal([c2.token, c2.tls?.insecure], ['opt_t', true]);
});

test('a kubeconfig the CLI cannot honour is refused by name', async () => {
  const refused = async (path: string) => {
    try {
      await resolveConnection({ kubeconfig: path });
    } catch (e) {
      return (e as Error).message;
    }
    return 'accepted';
  };
  const basic = kubeconfig('basic', '    server: https://10.0.0.9:10550', '    username: a\n    password: b');
  assert.match(await refused(basic.path), 'a username and password are not supported here');
  const noContext = kubeconfig(
    'no-context',
    '    server: https://10.0.0.9:10550',
    '    token: t',
    'elsewhere',
  );
  assert.match(await refused(noContext.path), '"elsewhere"');
  assert.match(await refused(noContext.path), noContext.path);
});

test('outpost get with a hand-written kubeconfig (a CA file beside it) reaches a real agent over https', async () => {
  const agent = await startTestAgent();
  try {
    const { d, path } = kubeconfig(
      'real',
      `    server: ${agent.secureUrl}\n    certificate-authority: ca.crt`,
      `    token: ${agent.token}`,
    );
    copyFileSync(join(agent.dataDir, 'auth', 'ca.crt'), join(d, 'ca.crt'));
    const env = { ...process.env, OUTPOST_DATA_DIR: join(dir, 'no-such-data-dir') };
    const r = await outpost(['get', 'pods', '-A', '--kubeconfig', path], { env });
    assert.is(r.code, 0, r.stderr);
    // The token went along: a write gets past authorization (no such pod), not 403.
    const w = await outpost(['restart', 'pod', 'ghost', '--kubeconfig', path], { env });
    assert.is(w.code, 1);
    assert.match(w.stderr, /not found/i);
    assert.not.match(w.stderr, /forbidden/i);
  } finally {
    await agent.stop();
  }
});

test.run();
