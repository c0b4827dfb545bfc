import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { authorize, identify } from '#lib/auth/authenticate.ts';
import { requiredRole } from '#lib/auth/policy.ts';
import { createToken, hashToken, parseTokens, TokenTable } from '#lib/auth/tokens.ts';
import { silentLogger } from '#lib/log.ts';
import { assertStatus } from '../helpers/status.ts';

const dir = mkdtempSync(join(tmpdir(), 'outpost-tokens-'));
const file = join(dir, 'tokens');

test('createToken stores only the hash, mode 0600, and the token authenticates', () => {
  const token = createToken(file, 'alice', 'operator');
  assert.match(token, /^opt_[A-Za-z0-9_-]{43}$/);
  const text = readFileSync(file, 'utf8');
  assert.not.match(text, token);
  assert.match(text, `${hashToken(token)},alice,operator`);
  assert.is(statSync(file).mode & 0o777, 0o600);
  const table = new TokenTable(file, silentLogger);
  assert.equal(table.lookup(token), { hash: hashToken(token), user: 'alice', role: 'operator' });
  assert.is(table.lookup(`${token}x`), undefined);
});

test('a changed tokens file is picked up without a restart; a broken one keeps the last good table', () => {
  const table = new TokenTable(file, silentLogger);
  const later = createToken(file, 'bob', 'viewer');
  assert.is(table.lookup(later)?.user, 'bob');
  const good = readFileSync(file, 'utf8');
  writeFileSync(file, `${good}garbage line\n`);
  assert.is(table.lookup(later)?.user, 'bob', 'previous table kept');
  writeFileSync(file, good);
});

test('parseTokens names the bad line', () => {
  assert.throws(() => parseTokens('# c\nsha256:abc,u,viewer\n', 'f'), /f:2: expected sha256:HEX,USER,ROLE/);
  assert.throws(() => parseTokens(`${hashToken('x')},u,root\n`, 'f'), /unknown role "root"/);
  assert.throws(() => createToken(file, 'bad user', 'viewer'), /invalid user name/);
});

test('policy: reads are viewer, restart and device edits operator, exec and audit admin, health public', () => {
  assert.is(requiredRole('GET', '/healthz'), 'public');
  assert.is(requiredRole('GET', '/version'), 'public');
  assert.is(requiredRole('GET', '/api/v1/pods'), 'viewer');
  assert.is(requiredRole('GET', '/api/v1/namespaces/default/pods/web/log'), 'viewer');
  assert.is(requiredRole('POST', '/api/v1/namespaces/default/pods/web/restart'), 'operator');
  assert.is(requiredRole('POST', '/api/v1/namespaces/default/pods/restart'), 'operator');
  assert.is(
    requiredRole('PATCH', '/apis/devices.kubeedge.io/v1beta1/namespaces/default/devices/t1'),
    'operator',
  );
  assert.is(requiredRole('GET', '/api/v1/namespaces/default/pods/web/exec'), 'admin');
  assert.is(requiredRole('POST', '/pods/default/web/exec'), 'admin');
  assert.is(requiredRole('GET', '/audit'), 'admin');
  assert.is(requiredRole('DELETE', '/api/v1/namespaces/default/pods/web'), 'operator');
  assert.is(requiredRole('POST', '/api/v1/namespaces/default/pods'), 'operator');
  assert.is(requiredRole('PATCH', '/api/v1/namespaces/default/pods/web/status'), 'operator');
  assert.is(requiredRole('PUT', '/api/v1/namespaces/default/configmaps/cfg'), 'operator');
  assert.is(requiredRole('GET', '/api/v1/namespaces/default/secrets'), 'admin', 'secret data is admin-only');
  assert.is(requiredRole('GET', '/api/v1/secrets'), 'admin');
  assert.is(requiredRole('DELETE', '/api/v1/namespaces'), 'admin', 'unclassified writes need admin');
});

test('authorize: 401 without or with a bad token, 403 below the role, principal otherwise', () => {
  const table = new TokenTable(file, silentLogger);
  const viewer = createToken(file, 'val', 'viewer');
  const auth = { tokens: table };
  assertStatus(() => authorize('GET', '/api/v1/pods', {}, auth), 401, 'Unauthorized');
  assertStatus(
    () => authorize('GET', '/api/v1/pods', { authorization: 'Bearer nope' }, auth),
    401,
    'Unauthorized',
  );
  assertStatus(
    () => authorize('GET', '/api/v1/pods', { authorization: 'Basic abc' }, auth),
    401,
    'Unauthorized',
  );
  assert.is(authorize('GET', '/api/v1/pods', { authorization: `Bearer ${viewer}` }, auth)?.user, 'val');
  assertStatus(
    () => authorize('POST', '/pods/default/web/restart', { authorization: `Bearer ${viewer}` }, auth),
    403,
    'User "val" (role viewer) cannot POST /pods/default/web/restart: it needs role operator',
  );
  assert.is(
    authorize('GET', '/healthz', { authorization: 'Bearer nope' }, auth),
    undefined,
    'health stays public',
  );
  assert.is(identify({}, {})?.via, 'anonymous', 'no auth configured: anonymous admin');
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
