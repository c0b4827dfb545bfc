// Outpost's kubeconfig reader (lib/cloud/kubeconfig.ts): kubeconfigs written to a temporary
// directory as a node's (`outpost join`, the lab) and an admin's (Outpost's own) carry them, and
// one real TLS connection through createCloudContext with relative paths and tls-server-name.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createSecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeAdminKubeconfig } from '#lib/auth/admin.ts';
import { systemClock } from '#lib/clock.ts';
import { kubeconfigYaml } from '#lib/cloud/bootstrap/join.ts';
import { createCloudContext } from '#lib/cloud/context.ts';
import {
  clusterCa,
  type Kubeconfig,
  KubeconfigError,
  kubeconfigCredentials,
  readKubeconfig,
} from '#lib/cloud/kubeconfig.ts';
import { silentLogger } from '#lib/log.ts';
import { issue, makeClusterPki } from '../../scripts/cloud/pki.ts';

const dir = mkdtempSync(join(tmpdir(), 'outpost-kubeconfig-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

// The lab's CA, a serving certificate for a name only tls-server-name can match, a node's client one.
makeClusterPki(dir);
issue(dir, 'server', '/CN=apiserver', 'serverAuth', 'DNS:apiserver.test');
issue(dir, 'client', '/O=system:nodes/CN=system:node:edge-1');
const pem = (f: string) => readFileSync(join(dir, f));
const b64 = (f: string) => pem(f).toString('base64');

/** Writes `text` as `name` under the temporary directory and returns its path. */
const write = (name: string, text: string): string => {
  const path = join(dir, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
};

const throwsKc = (fn: () => unknown, re: RegExp) =>
  assert.throws(fn, (e: unknown) => e instanceof KubeconfigError && re.test((e as Error).message));

test("a node's kubeconfig with inline data (the lab's): server, CA and client certificate", () => {
  const path = write(
    'lab.kubeconfig',
    `apiVersion: v1
kind: Config
clusters:
- name: lab
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority-data: ${b64('ca.crt')}
users:
- name: system:node:edge-1
  user:
    client-certificate-data: ${b64('client.crt')}
    client-key-data: ${b64('client.key')}
contexts:
- name: system:node:edge-1@lab
  context: {cluster: lab, user: "system:node:edge-1"}
current-context: system:node:edge-1@lab
`,
  );
  const kc = readKubeconfig(path);
  assert.is(kc.context, 'system:node:edge-1@lab');
  assert.is(kc.cluster.server, 'https://127.0.0.1:6443');
  assert.is(kc.user?.name, 'system:node:edge-1');
  const creds = kubeconfigCredentials(kc);
  assert.ok(creds.ca?.equals(pem('ca.crt')));
  assert.ok(creds.cert?.equals(pem('client.crt')));
  assert.ok(creds.key?.equals(pem('client.key')));
  assert.equal(creds.headers, {});
  assert.is(creds.rejectUnauthorized, undefined);
});

test("`outpost join`'s kubeconfig, and file paths relative to the kubeconfig's own directory", () => {
  // What join writes (absolute paths) reads back as it was written.
  const joined = write(
    'pki/kubeconfig',
    kubeconfigYaml(
      'https://10.0.0.1:6443',
      join(dir, 'ca.crt'),
      { 'client-certificate': join(dir, 'client.crt'), 'client-key': join(dir, 'client.key') },
      'system:node:edge-1',
    ),
  );
  const a = readKubeconfig(joined);
  assert.is(a.cluster.caFile, join(dir, 'ca.crt'));
  assert.is(a.user?.certFile, join(dir, 'client.crt'));
  // Relative paths: from the kubeconfig's directory, never from the working directory.
  const rel = write(
    'nested/relative.kubeconfig',
    `clusters:
- name: c
  cluster: {server: "https://10.0.0.1:6443", certificate-authority: ../ca.crt}
users:
- name: u
  user: {client-certificate: ../client.crt, client-key: ./../client.key, tokenFile: token}
contexts:
- {name: x, context: {cluster: c, user: u}}
current-context: x
`,
  );
  write('nested/token', '  abc.def\n');
  const kc = readKubeconfig(rel);
  assert.is(kc.cluster.caFile, join(dir, 'ca.crt'));
  assert.is(kc.user?.certFile, join(dir, 'client.crt'));
  assert.is(kc.user?.keyFile, join(dir, 'client.key'));
  assert.is(kc.user?.tokenFile, join(dir, 'nested', 'token'));
  const creds = kubeconfigCredentials(kc);
  assert.ok(creds.ca?.equals(pem('ca.crt')));
  assert.ok(creds.cert?.equals(pem('client.crt')));
  assert.ok(creds.key?.equals(pem('client.key')));
  assert.is(creds.headers.authorization, 'Bearer abc.def');
  assert.ok(clusterCa(kc)?.equals(pem('ca.crt')));
});

test("Outpost's admin kubeconfig: a token, over http or https with inline CA", () => {
  const data = join(dir, 'data');
  mkdirSync(join(data, 'auth'), { recursive: true });
  writeAdminKubeconfig(data, 'https://127.0.0.1:10550', 'admin-token', pem('ca.crt').toString());
  const kc = readKubeconfig(join(data, 'auth', 'admin.kubeconfig'));
  assert.is(kc.cluster.server, 'https://127.0.0.1:10550');
  const creds = kubeconfigCredentials(kc);
  assert.is(creds.headers.authorization, 'Bearer admin-token');
  assert.ok(creds.ca?.equals(pem('ca.crt')));
  assert.is(creds.cert, undefined);
});

const multi = `clusters:
- {name: prod, cluster: {server: "https://prod:6443", insecure-skip-tls-verify: true, tls-server-name: api.prod}}
- {name: lab, cluster: {server: "https://lab:6443"}}
users:
- {name: alice, user: {token: from-token, tokenFile: /nonexistent, as: bob}}
- {name: basic, user: {username: u, password: p}}
- {name: legacy, user: {token-file: legacy-token}}
contexts:
- {name: prod, context: {cluster: prod, user: alice, namespace: team}}
- {name: lab, context: {cluster: lab, user: basic}}
- {name: legacy, context: {cluster: lab, user: legacy}}
- {name: anonymous, context: {cluster: lab}}
current-context: lab
`;

test('the current context, or one named explicitly; skip-verify, server name, basic, impersonation', () => {
  const path = write('multi.kubeconfig', multi);
  write('legacy-token', 'legacy\n');
  const lab = readKubeconfig(path);
  assert.is(lab.context, 'lab');
  assert.is(
    kubeconfigCredentials(lab).headers.authorization,
    `Basic ${Buffer.from('u:p').toString('base64')}`,
  );
  const prod = readKubeconfig(path, { context: 'prod' });
  assert.is(prod.cluster.server, 'https://prod:6443');
  assert.is(prod.namespace, 'team');
  const creds = kubeconfigCredentials(prod);
  // token wins over tokenFile (the file is not even read); `as` is Impersonate-User.
  assert.equal(creds.headers, { authorization: 'Bearer from-token', 'impersonate-user': 'bob' });
  assert.is(creds.rejectUnauthorized, false);
  assert.is(creds.servername, 'api.prod');
  // client-node's spelling `token-file`, relative like the others.
  assert.is(
    kubeconfigCredentials(readKubeconfig(path, { context: 'legacy' })).headers.authorization,
    'Bearer legacy',
  );
  const anon = readKubeconfig(path, { context: 'anonymous' });
  assert.is(anon.user, undefined);
  assert.equal(kubeconfigCredentials(anon).headers, {});
});

test('a missing context, cluster or user is named; so is a missing current-context', () => {
  const path = write('multi.kubeconfig', multi);
  throwsKc(
    () => readKubeconfig(path, { context: 'staging' }),
    /context "staging" not found \(contexts: "prod", "lab"/,
  );
  throwsKc(
    () =>
      readKubeconfig(
        write(
          'no-cluster.kubeconfig',
          multi.replace('cluster: lab, user: basic', 'cluster: gone, user: basic'),
        ),
      ),
    /cluster "gone" \(of context "lab"\) not found \(clusters: "prod", "lab"\)/,
  );
  throwsKc(
    () => readKubeconfig(write('no-user.kubeconfig', multi.replace('user: basic}', 'user: carol}'))),
    /user "carol" \(of context "lab"\) not found/,
  );
  throwsKc(
    () => readKubeconfig(write('no-current.kubeconfig', multi.replace('current-context: lab', ''))),
    /no current-context is set and no context was named/,
  );
  throwsKc(() => readKubeconfig(write('empty.kubeconfig', '')), /no current-context/);
  throwsKc(
    () =>
      readKubeconfig(
        write('ctx-no-cluster.kubeconfig', 'contexts: [{name: a, context: {user: u}}]\ncurrent-context: a\n'),
      ),
    /context "a" names no cluster/,
  );
  throwsKc(
    () =>
      readKubeconfig(
        write('no-server.kubeconfig', multi.replace('server: "https://lab:6443"', 'tls-server-name: x')),
      ),
    /cluster "lab" has no server/,
  );
  throwsKc(() => readKubeconfig(join(dir, 'absent.kubeconfig')), /absent\.kubeconfig: ENOENT/);
  throwsKc(() => readKubeconfig(write('bad.kubeconfig', 'clusters: [\n')), /bad\.kubeconfig: not valid YAML/);
});

test('what Outpost does not do is refused by name, never ignored', () => {
  const user = (body: string) =>
    write(
      'refused.kubeconfig',
      `clusters: [{name: c, cluster: {server: "https://c:6443"}}]
users: [{name: u, user: ${body}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
    );
  throwsKc(
    () => readKubeconfig(user('{exec: {command: aws, apiVersion: client.authentication.k8s.io/v1}}')),
    /user "u": exec is not supported by Outpost \(credential plugins/,
  );
  throwsKc(
    () => readKubeconfig(user('{auth-provider: {name: oidc}}')),
    /user "u": auth-provider is not supported/,
  );
  throwsKc(
    () => readKubeconfig(user('{token: t, as: bob, as-groups: [admins]}')),
    /as-groups is not supported/,
  );
  throwsKc(
    () => readKubeconfig(user('{client-certificate: a.crt}')),
    /a client certificate without a client key/,
  );
  throwsKc(
    () => readKubeconfig(user('{client-key-data: YWJj}')),
    /a client key without a client certificate/,
  );
  throwsKc(
    () =>
      readKubeconfig(user('{client-certificate: a.crt, client-certificate-data: YWJj, client-key: a.key}')),
    /both client-certificate-data and client-certificate are set/,
  );
  throwsKc(() => readKubeconfig(user('{token: t, username: u, password: p}')), /a token and a username/);
  throwsKc(
    () => readKubeconfig(user('{client-certificate-data: "not base64!", client-key-data: YWJj}')),
    /client-certificate-data is not base64/,
  );
  const cluster = (body: string) =>
    write(
      'refused.kubeconfig',
      `clusters: [{name: c, cluster: ${body}}]\ncontexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n`,
    );
  throwsKc(
    () => readKubeconfig(cluster('{server: "https://c", proxy-url: "socks5://p:1080"}')),
    /cluster "c": proxy-url is not supported/,
  );
  throwsKc(
    () =>
      readKubeconfig(
        cluster('{server: "https://c", certificate-authority: ca.crt, certificate-authority-data: YWJj}'),
      ),
    /both certificate-authority-data and certificate-authority/,
  );
  throwsKc(
    () =>
      readKubeconfig(
        cluster('{server: "https://c", certificate-authority: ca.crt, insecure-skip-tls-verify: true}'),
      ),
    /a certificate authority and insecure-skip-tls-verify/,
  );
  throwsKc(
    () => readKubeconfig(cluster('{server: "https://c", insecure-skip-tls-verify: "yes"}')),
    /must be true or false/,
  );
  throwsKc(
    () => readKubeconfig(cluster('{server: "unix:///run/api.sock"}')),
    /is not an http:\/\/ or https:\/\/ URL/,
  );
  // A file that vanished is named with its field when credentials are taken.
  const gone = readKubeconfig(cluster('{server: "https://c", certificate-authority: nowhere/ca.crt}'));
  throwsKc(() => kubeconfigCredentials(gone), /cluster "c": certificate-authority .*nowhere\/ca\.crt/);
});

test('the cloud link refuses a plain http:// server unless insecure-skip-tls-verify says so', async () => {
  const kc = (insecure: boolean): Kubeconfig => ({
    source: 'test',
    context: 'x',
    cluster: { name: 'c', server: 'http://127.0.0.1:1', insecureSkipTlsVerify: insecure },
    user: { name: 'u', token: 't' },
  });
  const opts = { nodeName: 'edge-1', clock: systemClock, log: silentLogger };
  try {
    await createCloudContext({ ...opts, kubeConfig: kc(false) });
    assert.unreachable('an http:// server without insecure-skip-tls-verify was accepted');
  } catch (e) {
    assert.instance(e, KubeconfigError);
    assert.match((e as Error).message, /server http:\/\/127\.0\.0\.1:1 is plain http/);
  }
  const ctx = await createCloudContext({ ...opts, kubeConfig: kc(true) });
  await ctx.close();
});

test('a real TLS connection: relative CA and client certificate files, tls-server-name, a token', async () => {
  const server = createSecureServer({
    key: pem('server.key'),
    cert: pem('server.crt'),
    ca: pem('ca.crt'),
    requestCert: true,
    rejectUnauthorized: true,
  });
  server.on('stream', (stream, headers) => {
    const peer = (stream.session?.socket as TLSSocket | undefined)?.getPeerCertificate();
    stream.respond({ ':status': 200, 'content-type': 'application/json' });
    stream.end(
      JSON.stringify({ cn: peer?.subject?.CN, authorization: headers.authorization, path: headers[':path'] }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const path = write(
    'tls/node.kubeconfig',
    `clusters:
- name: c
  cluster: {server: "https://127.0.0.1:${port}/", certificate-authority: ../ca.crt, tls-server-name: apiserver.test}
users:
- name: n
  user: {client-certificate: ../client.crt, client-key: ../client.key, token: tok}
contexts: [{name: n@c, context: {cluster: c, user: n}}]
current-context: n@c
`,
  );
  // Closed whatever happens: a listening server would keep the suite's process alive.
  let ctx: Awaited<ReturnType<typeof createCloudContext>> | undefined;
  try {
    ctx = await createCloudContext({
      kubeConfig: readKubeconfig(path),
      nodeName: 'edge-1',
      clock: systemClock,
      log: silentLogger,
    });
    const seen = await ctx.request<{ cn: string; authorization: string; path: string }>(
      '/api/v1/nodes/edge-1',
      { timeoutMs: 60_000 },
    );
    assert.equal(seen, {
      cn: 'system:node:edge-1',
      authorization: 'Bearer tok',
      path: '/api/v1/nodes/edge-1',
    });
  } finally {
    await ctx?.close();
    server.close();
  }
});

test.run();
