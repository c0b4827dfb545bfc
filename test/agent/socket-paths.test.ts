// A data directory whose path is too long for a unix socket (sun_path: 107 bytes on Linux): the
// DMI socket in it stops the start with the path, its length and the limit (exit 2); the local
// admin socket is left out with a warning that says the same, and the CLI goes over https.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError } from '#lib/config.ts';
import { MAX_SOCKET_PATH, prepareSocket } from '#lib/dmi/socket.ts';
import { captureLogger, type LogLine, outpost, startTestAgent } from '../helpers/agent.ts';

const base = mkdtempSync(join(tmpdir(), 'outpost-long-'));
// DATA_DIR/outpost.sock is 20 bytes past the limit (more, if the temporary directory is long).
const filler = 'd'.repeat(Math.max(1, MAX_SOCKET_PATH + 20 - join(base, 'outpost.sock').length - 1));
const dataDir = join(base, filler);
const adminSocket = join(dataDir, 'outpost.sock');
const dmiSocket = join(dataDir, 'dmi.sock');

test.after(() => rmSync(base, { recursive: true, force: true }));

test('the socket paths are past the limit (the premise)', () => {
  assert.ok(Buffer.byteLength(adminSocket) > MAX_SOCKET_PATH);
  assert.ok(Buffer.byteLength(dmiSocket) > MAX_SOCKET_PATH);
});

test('the default DMI socket in a long data directory: a configuration error naming path, length, limit', async () => {
  const err = await startTestAgent({ dataDir }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.instance(err, ConfigError);
  assert.match(
    (err as Error).message,
    `--dmi-socket: the DMI socket ${dmiSocket} is ${Buffer.byteLength(dmiSocket)} bytes long, longer than the ${MAX_SOCKET_PATH} a unix socket path may have`,
  );
});

test('the admin socket is left out with a warning; the agent serves, the CLI reaches it over https', async () => {
  const shortDmi = join(base, 'dmi.sock');
  const lines: LogLine[] = [];
  // The same data directory: the failed start above left it free.
  const agent = await startTestAgent({ dataDir, flags: { dmiSocket: shortDmi }, log: captureLogger(lines) });
  try {
    const warning = lines.find((l) => l.msg?.startsWith('the local admin socket could not be opened'));
    assert.ok(warning, JSON.stringify(lines.map((l) => l.msg)));
    assert.equal(
      [warning!.fields.path, warning!.fields.bytes, warning!.fields.max],
      [adminSocket, Buffer.byteLength(adminSocket), MAX_SOCKET_PATH],
    );
    assert.match(String((warning!.fields.err as Error).message), `${adminSocket} is `);
    // No socket anywhere: neither at the long path nor at a truncated one beside it.
    assert.equal(readdirSync(base).sort(), ['dmi.sock', filler].sort());
    assert.not.ok(readdirSync(dataDir).includes('outpost.sock'));
    // The data directory's admin credential still works: audit is an admin-only call.
    const r = await outpost(['audit', '-s', agent.url]);
    assert.is(r.code, 0, r.stderr);
  } finally {
    await agent.stop();
  }
});

test('prepareSocket refuses a long path before making its directory (the virtual mapper too)', async () => {
  const dir = join(base, 'x'.repeat(MAX_SOCKET_PATH));
  const err = await prepareSocket(join(dir, 'm.sock'), 'mapper').then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  assert.match(
    String(err?.message),
    /^mapper socket .* bytes long, longer than the \d+ a unix socket path may have/,
  );
  assert.not.ok(readdirSync(base).includes('x'.repeat(MAX_SOCKET_PATH)));
});

test.run();
