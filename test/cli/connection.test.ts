// The CLI reads the admin kubeconfig Outpost writes without the YAML library (start-up time): the
// fast reader must give what the YAML parser gives for every form the writer produces, and leave
// anything else to the parser.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { adminKubeconfigPath, writeAdminKubeconfig } from '#lib/auth/admin.ts';
import { outpostKubeconfig, resolveConnection } from '#lib/cli/connection.ts';

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

test.run();
