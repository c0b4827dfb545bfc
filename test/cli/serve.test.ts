// `outpost serve` exits: fatal module errors with their code after a clean stop, signals with 0,
// and start-up errors (configuration 2, data directory / metabase 3, listen 4) as real processes.
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase, SCHEMA_VERSION } from '#db/open.ts';
import { serve } from '#lib/cli/serve.ts';
import { silentLogger } from '#lib/log.ts';
import { ExitCode, FatalError } from '#lib/supervisor/exit-codes.ts';
import type { SignalSource } from '#lib/supervisor/process.ts';
import { outpost } from '../helpers/agent.ts';

function inProcess() {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-serve-'));
  const signals = new EventEmitter();
  let resolveExit!: (code: number) => void;
  const exited = new Promise<number>((r) => (resolveExit = r));
  const start = () =>
    serve(
      { listen: '127.0.0.1:0', dataDir: dir, nodeName: 'edge-1', logLevel: 'silent' },
      { exit: resolveExit, signals: signals as SignalSource, log: silentLogger },
    );
  return { dir, signals, exited, start, done: () => rmSync(dir, { recursive: true, force: true }) };
}

test('a module throwing FatalError stops Outpost with its exit code, after a clean stop', async () => {
  const t = inProcess();
  try {
    const agent = await t.start();
    agent.supervisor.register({
      name: 'doomed',
      policy: 'Always',
      run: async () => {
        throw new FatalError(ExitCode.DataDir, 'the data directory went away');
      },
    });
    assert.is(await t.exited, ExitCode.DataDir);
    assert.not.ok(agent.metabase.sqlite.open, 'the metabase was closed before exiting');
    const alive = agent.supervisor.snapshot().filter((m) => !['stopped', 'failed'].includes(m.state));
    assert.equal(alive, [], 'every module stopped');
    const refused = await fetch(`${agent.url}/livez`).then(
      () => false,
      () => true,
    );
    assert.ok(refused, 'the API no longer listens');
  } finally {
    t.done();
  }
});

test('SIGTERM shuts down gracefully with exit code 0', async () => {
  const t = inProcess();
  try {
    const agent = await t.start();
    assert.is((await fetch(`${agent.url}/livez`)).status, 200);
    t.signals.emit('SIGTERM');
    assert.is(await t.exited, 0);
    assert.not.ok(agent.metabase.sqlite.open);
  } finally {
    t.done();
  }
});

test('invalid configuration: exit 2 with a clear message, nothing started', async () => {
  const r = await outpost([
    'serve',
    '--listen',
    'not-an-address',
    '--data-dir',
    '/nonexistent/never-created',
  ]);
  assert.is(r.code, ExitCode.InvalidConfig, r.stderr);
  assert.is(r.stderr, 'error: --listen "not-an-address": expected HOST:PORT, e.g. 127.0.0.1:10550\n');
});

test('unusable data directory: exit 3', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-serve-'));
  try {
    writeFileSync(join(dir, 'file'), '');
    const r = await outpost(['serve', '--listen', '127.0.0.1:0', '--data-dir', join(dir, 'file', 'data')]);
    assert.is(r.code, ExitCode.DataDir, r.stderr);
    assert.match(r.stderr, /^error: cannot create data directory .*file\/data: ENOTDIR/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a metabase from a newer Outpost: exit 3, left untouched', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-serve-'));
  try {
    openMetabase(dir).close();
    const raw = new Database(join(dir, 'outpost.db'));
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    const r = await outpost(['serve', '--listen', '127.0.0.1:0', '--data-dir', dir]);
    assert.is(r.code, ExitCode.DataDir, r.stderr);
    assert.match(r.stderr, /written by a newer Outpost/);
    const after = new Database(join(dir, 'outpost.db'));
    assert.is(after.pragma('user_version', { simple: true }), SCHEMA_VERSION + 1);
    after.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the listen address in use: exit 4 (restartable, unlike configuration)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-serve-'));
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  const port = (taken.address() as { port: number }).port;
  try {
    const r = await outpost(['serve', '--listen', `127.0.0.1:${port}`, '--data-dir', dir]);
    assert.is(r.code, ExitCode.ListenFailed, r.stderr);
    assert.match(r.stderr, /^error: --listen 127\.0\.0\.1:\d+: .*EADDRINUSE/);
  } finally {
    taken.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
