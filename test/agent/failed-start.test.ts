// A start that fails after the API listens closes what it had opened: the API's port is free
// again, the data directory can be taken by the next agent, and the error reaches the caller (the
// process's exit code). The late failure is real: a DMI socket that cannot be bound.
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ExitCode, FatalError } from '#lib/supervisor/exit-codes.ts';
import { outpost, startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { onFreePort } from '../helpers/outpost-process.ts';

const dir = mkdtempSync(join(tmpdir(), 'outpost-failed-start-'));
// A file where the DMI socket's directory should be: mkdir fails with ENOTDIR, late in the start.
const notADir = join(dir, 'a-file');
writeFileSync(notADir, '');
// No runtime: the pods side loads and its modules run (and must be stopped), nothing is reached.
const runtime = `unix://${join(dir, 'no-runtime.sock')}`;
const agents: TestAgent[] = [];

test.after(async () => {
  for (const a of agents) await a.stop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

/** Whether this process can bind the port (nothing else holds it). */
const bindable = (port: number) =>
  new Promise<boolean>((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });

/** An agent on `port` (0: one the kernel picks, no race with another process for it). */
const start = async (dataDir: string, port = 0, dmiSocket?: string) => {
  const a = await startTestAgent({
    dataDir,
    runtimeEndpoint: runtime,
    agent: { runtimeCandidates: [runtime] },
    flags: { listen: `127.0.0.1:${port}`, ...(dmiSocket ? { dmiSocket } : {}) },
  });
  agents.push(a);
  return a;
};

/**
 * A start that fails late, at its DMI socket, on a port found free: its error and the port, which
 * the test then checks is free again. A port another process took before the agent bound it fails
 * the start early, at --listen (the same exit code 4): onFreePort starts again on another port.
 */
const failedStart = async (dataDir: string, dmiSocket: string) => {
  const { err, port } = await onFreePort('failing agent', async (port) => {
    const err = await start(dataDir, port, dmiSocket).then(
      () => undefined,
      (e: unknown) => e,
    );
    if (err instanceof FatalError && err.message.startsWith('--listen ')) throw err;
    return { err, port };
  });
  assert.instance(err, FatalError);
  assert.is((err as FatalError).exitCode, ExitCode.ListenFailed);
  assert.match((err as Error).message, `--dmi-socket ${dmiSocket}: `);
  return { err: err as Error, port };
};

test('a DMI socket in a path that is a file: the port is free, the next agent takes the data directory', async () => {
  const dataDir = join(dir, 'data-1');
  const { err, port } = await failedStart(dataDir, join(notADir, 'dmi.sock'));
  assert.match(err.message, `mkdir '${notADir}'`);
  assert.ok(await bindable(port), 'the API port is free again');
  // The local admin socket was closed (its file goes with it).
  assert.is(statSync(join(dataDir, 'outpost.sock'), { throwIfNoEntry: false }), undefined);
  // Lock, metabase and port are free: the same data directory and port serve again (the same port
  // on purpose: that the failed start left it free is what is checked).
  const next = await start(dataDir, port);
  const res = await fetch(`${next.url}/api/v1/namespaces/default/pods`, { headers: next.admin });
  assert.is(res.status, 200);
  await next.stop();
});

test('a DMI socket another live agent serves: refused by path, that agent goes on', async () => {
  const first = await start(join(dir, 'data-2'));
  const taken = join(first.dataDir, 'dmi.sock');
  const dataDir = join(dir, 'data-3');
  const { err, port } = await failedStart(dataDir, taken);
  assert.match(err.message, 'in use by another process');
  assert.ok(await bindable(port), 'the API port is free again');
  assert.ok(statSync(taken).isSocket(), "the other agent's DMI socket is still there");
  const next = await start(dataDir, port);
  await next.stop();
  assert.is((await fetch(`${first.url}/livez`)).status, 200);
});

test('outpost serve exits with the error: code 4 and the socket named on stderr', async () => {
  const dmi = join(notADir, 'dmi.sock');
  const r = await outpost(
    [
      'serve',
      '--listen',
      '127.0.0.1:0', // any port: the start fails at its DMI socket, after the API listens
      '--data-dir',
      join(dir, 'data-4'),
      '--runtime-endpoint',
      runtime,
      '--dmi-socket',
      dmi,
      '--log-level',
      'silent',
    ],
    { timeoutMs: 120_000 },
  );
  assert.is(r.code, ExitCode.ListenFailed, r.stderr);
  assert.match(r.stderr, `error: --dmi-socket ${dmi}: `);
});

test.run();
