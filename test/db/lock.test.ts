// One agent per data directory: a live owner is named and refused (exit 3, nothing touched), a
// lock left by a dead process or a recycled PID is taken over, a released lock is gone.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DataDirLockedError, LOCK_FILE, lockDataDir } from '#db/lock.ts';
import { run } from '../helpers/agent.ts';
import { ensureBundle, spawnOutpost } from '../helpers/outpost-process.ts';

const fresh = () => mkdtempSync(join(tmpdir(), 'outpost-lock-'));

/** A live process that is not this one (a sleeping node), stopped by the returned function. */
function otherProcess(): { pid: number; stop: () => Promise<void> } {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)'], { stdio: 'ignore' });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

test('the lock holds this PID and is removed on release', () => {
  const dir = fresh();
  try {
    const lock = lockDataDir(dir);
    assert.match(readFileSync(join(dir, LOCK_FILE), 'utf8'), new RegExp(`^${process.pid} `));
    lock.release();
    assert.not.ok(existsSync(join(dir, LOCK_FILE)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a live owner is refused, by PID', async () => {
  const dir = fresh();
  const other = otherProcess();
  try {
    writeFileSync(join(dir, LOCK_FILE), `${other.pid}\n`);
    try {
      lockDataDir(dir);
      assert.unreachable('locked twice');
    } catch (e) {
      assert.instance(e, DataDirLockedError);
      assert.is((e as DataDirLockedError).pid, other.pid);
      assert.match((e as Error).message, `in use by the Outpost with PID ${other.pid}`);
    }
  } finally {
    await other.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a lock of a dead process is taken over', async () => {
  const dir = fresh();
  const other = otherProcess();
  await other.stop();
  try {
    writeFileSync(join(dir, LOCK_FILE), `${other.pid} 12345\n`);
    const lock = lockDataDir(dir);
    assert.match(readFileSync(join(dir, LOCK_FILE), 'utf8'), new RegExp(`^${process.pid} `));
    lock.release();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a live PID with another start time is a recycled PID: taken over', async () => {
  if (process.platform !== 'linux') return;
  const dir = fresh();
  const other = otherProcess();
  try {
    writeFileSync(join(dir, LOCK_FILE), `${other.pid} 1\n`);
    lockDataDir(dir).release();
  } finally {
    await other.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a second outpost serve on the same data directory exits 3 naming the first, touching nothing', async () => {
  const dir = fresh();
  const first = await spawnOutpost({
    dataDir: dir,
    runtimeEndpoint: `unix://${join(dir, 'no-runtime.sock')}`,
    nodeName: 'edge-1',
  });
  try {
    const lockBefore = readFileSync(join(dir, LOCK_FILE), 'utf8');
    const r = await run(
      process.execPath,
      [ensureBundle(), 'serve', '--listen', '127.0.0.1:0', '--data-dir', dir, '--manifests', dir],
      { timeoutMs: 60_000 },
    );
    assert.is(r.code, 3, r.stderr);
    assert.match(r.stderr, `in use by the Outpost with PID ${first.pid}`);
    // One line, before any log line: nothing was opened, listened on or started.
    assert.is(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.is(readFileSync(join(dir, LOCK_FILE), 'utf8'), lockBefore);
    assert.is((await fetch(`${first.url}/livez`)).status, 200, 'the first one still serves');
    await first.kill9();
    // The first one died without releasing: the next one takes the lock over.
    const next = await spawnOutpost({
      dataDir: dir,
      runtimeEndpoint: `unix://${join(dir, 'no-runtime.sock')}`,
      nodeName: 'edge-1',
    });
    assert.match(readFileSync(join(dir, LOCK_FILE), 'utf8'), new RegExp(`^${next.pid} `));
    await next.kill9();
  } finally {
    await first.kill9();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
