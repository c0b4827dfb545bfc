// Roles and the audit trail for every write path, with the real kubectl over TLS with bearer tokens
// (kubectl sends a token only over https), the agent logging at debug level: viewers only read; operators create, change
// and delete pods (status too) and ConfigMaps but never touch Secrets; admins read and write
// Secrets. Every write, refused or not, is in the audit trail with its user, role and answer; a
// Secret's value appears neither in the trail nor in the log.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createToken } from '#lib/auth/tokens.ts';
import { newKey, selfSignedCertificate } from '#lib/cloud/x509.ts';
import type { AuditRecord } from '#lib/store/audit.ts';
import { kubectl, startTestAgent, type TestAgent } from '../helpers/agent.ts';

const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-roles-'));
const tokensFile = join(dir, 'tokens');
const token = {
  viewer: createToken(tokensFile, 'vera', 'viewer'),
  operator: createToken(tokensFile, 'otto', 'operator'),
  admin: createToken(tokensFile, 'ada', 'admin'),
};
type Role = keyof typeof token;
const SECRET = 'SUPERSECRET-7f3a9c';
const NS = 'roles';
let agent: TestAgent | undefined;
let logged = '';
const log = pino(
  { level: 'debug' },
  new Writable({
    write(chunk, _encoding, done) {
      logged += String(chunk);
      done();
    },
  }),
);
const key = newKey();
writeFileSync(join(dir, 'server.key'), key.keyPem);
writeFileSync(
  join(dir, 'server.pem'),
  selfSignedCertificate(key.privateKey, { commonName: '127.0.0.1' }, { ips: ['127.0.0.1'] }, ['server auth']),
);
const tls = [`--certificate-authority=${join(dir, 'server.pem')}`];

const as = (role: Role, args: string[]) =>
  kubectl(agent!.url, [...tls, `--token=${token[role]}`, '-n', NS, ...args]);
const allowed = async (role: Role, args: string[]) => {
  const r = await as(role, args);
  assert.is(r.code, 0, `${role}: kubectl ${args.join(' ')}\n${r.stdout}${r.stderr}`);
  return r.stdout;
};
const forbidden = async (role: Role, args: string[]) => {
  const r = await as(role, args);
  assert.is(r.code, 1, `${role}: kubectl ${args.join(' ')} should be refused\n${r.stdout}`);
  assert.match(
    r.stderr,
    /Forbidden|it needs role (operator|admin)/,
    `${role}: kubectl ${args.join(' ')}: ${r.stderr}`,
  );
};
const audit = async (): Promise<AuditRecord[]> => {
  const r = await kubectl(agent!.url, [
    ...tls,
    `--token=${token.admin}`,
    'get',
    '--raw',
    '/audit?limit=10000',
  ]);
  assert.is(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { items: AuditRecord[] }).items;
};
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

test.before(async () => {
  // No runtime: the suite is about the API; pods are stored, and deleted at once.
  agent = await startTestAgent({
    nodeName: 'roles-node',
    log,
    flags: { tokensFile, tlsCert: join(dir, 'server.pem'), tlsKey: join(dir, 'server.key') },
  });
});

test('viewer reads pods and ConfigMaps, changes nothing, never sees Secrets', async () => {
  await allowed('viewer', ['get', 'pods']);
  await allowed('viewer', ['get', 'configmaps']);
  await forbidden('viewer', ['get', 'secrets']);
  await forbidden('viewer', ['run', 'v-pod', '--image=busybox']);
  await forbidden('viewer', ['create', 'configmap', 'v-cm', '--from-literal=a=1']);
  await forbidden('viewer', [
    'apply',
    '--server-side',
    '-f',
    file('v-cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v-cm\ndata:\n  a: "1"\n'),
  ]);
});

test('operator creates, labels, patches status of and deletes pods; edits ConfigMaps', async () => {
  assert.match(await allowed('operator', ['run', 'o-pod', '--image=busybox']), /pod\/o-pod created/);
  await allowed('operator', ['label', 'pod', 'o-pod', 'tier=edge']);
  await allowed('operator', [
    'patch',
    'pod',
    'o-pod',
    '--subresource=status',
    '--type=merge',
    '-p',
    '{"status":{"message":"checked"}}',
  ]);
  await forbidden('viewer', ['label', 'pod', 'o-pod', 'tier=cloud', '--overwrite']);
  await forbidden('viewer', ['delete', 'pod', 'o-pod']);
  await allowed('operator', ['create', 'configmap', 'o-cm', '--from-literal=mode=fast']);
  await allowed('operator', ['patch', 'configmap', 'o-cm', '--type=merge', '-p', '{"data":{"mode":"slow"}}']);
  await allowed('operator', [
    'apply',
    '--server-side',
    '-f',
    file('o-cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: o-cm2\ndata:\n  a: "1"\n'),
  ]);
  await forbidden('viewer', ['delete', 'configmap', 'o-cm']);
  await allowed('operator', ['delete', 'configmap', 'o-cm', 'o-cm2']);
  await allowed('operator', ['delete', 'pod', 'o-pod']);
});

test('operator can neither read nor write Secrets; admin can', async () => {
  await forbidden('operator', ['get', 'secrets']);
  await forbidden('operator', [
    'create',
    'secret',
    'generic',
    'o-secret',
    `--from-literal=password=${SECRET}`,
  ]);
  await allowed('admin', ['create', 'secret', 'generic', 'a-secret', `--from-literal=password=${SECRET}`]);
  const yaml = await allowed('admin', ['get', 'secret', 'a-secret', '-o', 'yaml']);
  assert.ok(yaml.includes(Buffer.from(SECRET).toString('base64')), 'admin reads the data');
  await forbidden('operator', ['delete', 'secret', 'a-secret']);
  await allowed('admin', ['delete', 'secret', 'a-secret']);
});

test('every write, refused or not, is audited with user, role and answer; no Secret value anywhere', async () => {
  const trail = await audit();
  const has = (user: string, verb: string, path: RegExp, code: number) =>
    assert.ok(
      trail.some((r) => r.user === user && r.verb === verb && path.test(r.path) && r.code === code),
      `${user} ${verb} ${path} ${code} in ${JSON.stringify(trail.map((r) => [r.user, r.verb, r.path, r.code]))}`,
    );
  has('vera', 'POST', /\/namespaces\/roles\/pods$/, 403);
  has('vera', 'POST', /\/namespaces\/roles\/configmaps$/, 403);
  has('vera', 'PATCH', /\/pods\/o-pod$/, 403);
  has('vera', 'DELETE', /\/pods\/o-pod$/, 403);
  has('otto', 'POST', /\/namespaces\/roles\/pods$/, 201);
  has('otto', 'PATCH', /\/pods\/o-pod$/, 200);
  has('otto', 'PATCH', /\/pods\/o-pod\/status$/, 200);
  has('otto', 'DELETE', /\/pods\/o-pod$/, 200);
  has('otto', 'POST', /\/namespaces\/roles\/configmaps$/, 201);
  has('otto', 'PATCH', /\/configmaps\/o-cm$/, 200);
  has('otto', 'PATCH', /\/configmaps\/o-cm2$/, 201);
  has('otto', 'DELETE', /\/configmaps\/o-cm$/, 200);
  has('otto', 'POST', /\/namespaces\/roles\/secrets$/, 403);
  has('otto', 'DELETE', /\/secrets\/a-secret$/, 403);
  has('ada', 'POST', /\/namespaces\/roles\/secrets$/, 201);
  has('ada', 'DELETE', /\/secrets\/a-secret$/, 200);
  for (const r of trail) {
    const expectedRole = { vera: 'viewer', otto: 'operator', ada: 'admin' }[r.user];
    if (expectedRole) assert.is(r.role, expectedRole, JSON.stringify(r));
    assert.is(r.namespace, NS, JSON.stringify(r));
  }
  const base64 = Buffer.from(SECRET).toString('base64');
  const everything = JSON.stringify(trail) + logged;
  assert.ok(logged.length > 0, 'the agent logged at debug level');
  assert.not.ok(everything.includes(SECRET), 'the value is not in the trail or the log');
  assert.not.ok(everything.includes(base64), 'nor its base64');
});

test.after(async () => {
  await agent?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test.run();
