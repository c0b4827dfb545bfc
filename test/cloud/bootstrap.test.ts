import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nodeClientRequest } from '#lib/cloud/bootstrap/certificates.ts';
import {
  caCertHash,
  detachedSignature,
  parseCaHash,
  parseToken,
  verifyClusterInfo,
  verifyDetachedSignature,
} from '#lib/cloud/bootstrap/discovery.ts';
import { rotationDeadline } from '#lib/cloud/bootstrap/rotation.ts';

const token = parseToken('abcdef.0123456789abcdef');
const dir = mkdtempSync(join(tmpdir(), 'outpost-bootstrap-'));
execFileSync(
  'openssl',
  [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-subj',
    '/CN=test-ca',
    '-days',
    '1',
  ],
  { cwd: dir, stdio: 'pipe' },
);
const caPem = execFileSync('cat', [join(dir, 'ca.crt')]).toString();
// openssl's own SPKI hash, as `kubeadm token create --print-join-command` documents it.
const opensslHash = `sha256:${execFileSync('sh', [
  '-c',
  `openssl x509 -pubkey -in ${join(dir, 'ca.crt')} | openssl pkey -pubin -outform der | openssl dgst -sha256 -hex | sed 's/^.* //'`,
])
  .toString()
  .trim()}`;
const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: ""
  cluster:
    certificate-authority-data: ${Buffer.from(caPem).toString('base64')}
    server: https://10.0.0.1:6443
`;

test.after(() => rmSync(dir, { recursive: true, force: true }));

test('tokens and hashes are parsed strictly', () => {
  assert.equal(token, { id: 'abcdef', secret: '0123456789abcdef' });
  assert.throws(() => parseToken('ABCDEF.0123456789abcdef'), /ID\.SECRET/);
  assert.throws(() => parseToken('abcdef0123456789abcdef'), /ID\.SECRET/);
  assert.is(parseCaHash(`sha256:${'AB'.repeat(32)}`), `sha256:${'ab'.repeat(32)}`);
  assert.throws(() => parseCaHash('md5:abc'), /sha256/);
});

test('the CA hash is the SHA-256 of the SubjectPublicKeyInfo, as openssl computes it', () => {
  assert.is(caCertHash(caPem), opensslHash);
});

test('a detached JWS verifies only with the right token, kid and content', () => {
  const jws = detachedSignature(kubeconfig, token);
  assert.match(jws, /^[\w-]+\.\.[\w-]+$/);
  assert.ok(verifyDetachedSignature(kubeconfig, jws, token));
  assert.not.ok(verifyDetachedSignature(`${kubeconfig} `, jws, token));
  assert.not.ok(verifyDetachedSignature(kubeconfig, jws, { id: 'abcdef', secret: 'ffffffffffffffff' }));
  assert.not.ok(verifyDetachedSignature(kubeconfig, jws, { id: 'zzzzzz', secret: token.secret }));
  assert.not.ok(verifyDetachedSignature(kubeconfig, jws.replace('..', '.x.'), token));
  const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}..`;
  assert.not.ok(verifyDetachedSignature(kubeconfig, none, token));
});

test('cluster-info is accepted only when signed and pinned', () => {
  const data = { kubeconfig, [`jws-kubeconfig-${token.id}`]: detachedSignature(kubeconfig, token) };
  assert.equal(verifyClusterInfo(data, token, [opensslHash]), { server: 'https://10.0.0.1:6443', caPem });
  assert.throws(() => verifyClusterInfo(data, token, [`sha256:${'0'.repeat(64)}`]), /matches none/);
  assert.throws(
    () => verifyClusterInfo({ kubeconfig }, token, [opensslHash]),
    /no signature for token abcdef/,
  );
  const forged = { ...data, kubeconfig: kubeconfig.replace('10.0.0.1', '10.6.6.6') };
  assert.throws(() => verifyClusterInfo(forged, token, [opensslHash]), /does not match/);
});

test('the CSR is a valid PKCS#10 request for system:node:<name> in system:nodes', () => {
  const { keyPem, csr } = nodeClientRequest('edge-7');
  assert.match(keyPem, /^-----BEGIN EC PRIVATE KEY-----\n/); // SEC1, as kubelet writes it
  writeFileSync(join(dir, 'node.csr'), csr);
  const out = execFileSync(
    'openssl',
    ['req', '-in', join(dir, 'node.csr'), '-noout', '-verify', '-subject', '-text'],
    { stdio: 'pipe' },
  ).toString();
  assert.match(out, /O = system:nodes, CN = system:node:edge-7/);
  // The kubelet-client approver refuses requests with SANs (IsKubeletClientCSR).
  assert.not.match(out, /Subject Alternative Name/);
  assert.match(out, /TLS Web Client Authentication/);
});

test('rotation happens between 70% and 90% of the lifetime', () => {
  assert.is(
    rotationDeadline(0, 1000, () => 0),
    700,
  );
  assert.is(Math.round(rotationDeadline(0, 1000, () => 1)), 900);
  assert.is(
    rotationDeadline(1000, 2000, () => 0.5),
    1800,
  );
});

test.run();
