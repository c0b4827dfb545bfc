// Real child processes: a small script that crashes, exits or waits for SIGTERM as told.

import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ManualClock, settle } from '#lib/clock.ts';
import { ExitCode } from '#lib/supervisor/exit-codes.ts';
import type { Logger } from '#lib/supervisor/modules.ts';
import { type SignalSource, superviseProcess } from '#lib/supervisor/process.ts';

// argv: <dir> <mode>. Counts its runs in <dir>/runs; writes <dir>/up once its SIGTERM handler is set.
const CHILD = `
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
const [dir, mode] = process.argv.slice(2);
const runs = (existsSync(dir + '/runs') ? Number(readFileSync(dir + '/runs', 'utf8')) : 0) + 1;
writeFileSync(dir + '/runs', String(runs));
if (mode === 'exit0') process.exit(0);
if (mode === 'config') process.exit(${ExitCode.InvalidConfig});
if (mode === 'sigkill-once' && runs === 1) process.kill(process.pid, 'SIGKILL');
if (mode === 'sigkill-once') process.exit(0);
if (mode === 'crash-twice' && runs <= 2) process.exit(1);
process.on('SIGTERM', () => { writeFileSync(dir + '/got-sigterm', ''); process.exit(7); });
writeFileSync(dir + '/up', String(process.pid));
setTimeout(() => process.exit(99), 60_000); // never outlive a broken test
`;

interface Entry {
  level: string;
  obj: Record<string, unknown>;
  msg: string | undefined;
}

function setup(mode: string) {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-supervise-'));
  const script = join(dir, 'child.mjs');
  writeFileSync(script, CHILD);
  const logs: Entry[] = [];
  const at = (level: string) => (obj: object, msg?: string) =>
    void logs.push({ level, obj: { ...obj }, msg });
  const log: Logger = { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') };
  const signals = new EventEmitter();
  const run = () =>
    settles(
      superviseProcess({
        command: process.execPath,
        args: [script, dir, mode],
        backoff: { initialMs: 50, factor: 2, maxMs: 400, maxRetries: 4 }, // a regression fails, not loops
        log,
        signals: signals as SignalSource,
      }),
    );
  const runs = () => Number(readFileSync(join(dir, 'runs'), 'utf8'));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  return { dir, logs, signals, run, runs, cleanup };
}

/** Fails instead of hanging when supervision never ends (a bound, not a timing assertion). */
function settles<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('superviseProcess never returned')), 20_000);
  });
  return Promise.race([p, guard]).finally(() => clearTimeout(timer));
}

/** Polls until `cond` holds; fails (instead of hanging) if it never does. */
async function waitFor(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.unreachable(`never saw: ${what}`);
}

test('a child that crashes twice is restarted twice; SIGTERM is forwarded; we exit with its code', async () => {
  const t = setup('crash-twice');
  try {
    const done = t.run();
    await waitFor(() => existsSync(join(t.dir, 'up')), 'third child up');
    assert.is(t.signals.listenerCount('SIGTERM'), 1);
    t.signals.emit('SIGTERM');
    assert.is(await done, 7);
    assert.is(t.runs(), 3);
    assert.ok(existsSync(join(t.dir, 'got-sigterm')));
    const restarts = t.logs.filter((l) => l.msg === 'child crashed; restarting after backoff');
    assert.equal(
      restarts.map((l) => [l.obj.exitCode, l.obj.restarts, l.obj.delayMs]),
      [
        [1, 1, 50],
        [1, 2, 100],
      ],
    );
    assert.ok(t.logs.some((l) => l.msg === 'forwarding signal to child' && l.obj.signal === 'SIGTERM'));
    assert.is(t.signals.listenerCount('SIGTERM') + t.signals.listenerCount('SIGINT'), 0);
  } finally {
    t.cleanup();
  }
});

test('a child exiting 0 is not restarted', async () => {
  const t = setup('exit0');
  try {
    assert.is(await t.run(), 0);
    assert.is(t.runs(), 1);
    assert.ok(t.logs.some((l) => l.msg === 'child exited cleanly; not restarting'));
  } finally {
    t.cleanup();
  }
});

test('a child exiting with the configuration exit code is not restarted', async () => {
  const t = setup('config');
  try {
    assert.is(await t.run(), ExitCode.InvalidConfig);
    assert.is(t.runs(), 1);
    assert.ok(t.logs.some((l) => l.level === 'error' && l.msg?.includes('configuration error')));
  } finally {
    t.cleanup();
  }
});

test('a child killed by a signal we did not forward is restarted', async () => {
  const t = setup('sigkill-once');
  try {
    assert.is(await t.run(), 0);
    assert.is(t.runs(), 2);
    const restart = t.logs.find((l) => l.msg === 'child crashed; restarting after backoff');
    assert.equal([restart?.obj.signal, restart?.obj.exitCode], ['SIGKILL', 137]);
  } finally {
    t.cleanup();
  }
});

test('backoff resets after the child ran resetAfterMs; the retry limit ends supervision (fake spawn)', async () => {
  const clock = new ManualClock();
  const children: EventEmitter[] = [];
  const spawn = () => {
    const child = Object.assign(new EventEmitter(), { pid: 1000 + children.length, kill: () => true });
    children.push(child);
    return child as unknown as ChildProcess;
  };
  const delays: unknown[] = [];
  const quiet = () => {};
  const log: Logger = {
    info: quiet,
    debug: quiet,
    error: quiet,
    warn: (obj) => void delays.push((obj as { delayMs?: number }).delayMs),
  };
  const done = superviseProcess({
    command: 'outpost',
    args: ['serve'],
    backoff: { initialMs: 50, resetAfterMs: 1000, maxRetries: 3 },
    clock,
    log,
    spawn,
    signals: new EventEmitter() as SignalSource,
  });
  // Lifetimes of successive children before each crashes: short, short, long enough to reset, short x3.
  for (const uptime of [0, 0, 1000, 0, 0, 0]) {
    await clock.advanceAsync(uptime);
    children.at(-1)!.emit('exit', 1, null);
    await settle();
    if (clock.nextAt() !== undefined) await clock.advanceAsync(clock.nextAt()! - clock.now());
  }
  assert.is(await done, 1);
  assert.is(children.length, 6);
  assert.equal(delays, [50, 100, 50, 100, 200]);
});

test.run();
