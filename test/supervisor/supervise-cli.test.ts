// `outpost supervise` with real processes: the CLI from source supervising `outpost serve`.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { serveCommandLine } from '#lib/cli/supervise.ts';
import { ExitCode } from '#lib/supervisor/exit-codes.ts';
import { onFreePort } from '../helpers/outpost-process.ts';

const entry = join(import.meta.dirname, '../../bin/outpost.ts');

interface Supervised {
  child: ChildProcess;
  /** The JSON log lines the supervisor wrote so far (the served child logs at error level only). */
  logs(): Record<string, unknown>[];
  exited: Promise<number | null>;
}

function supervise(serveFlags: string[]): Supervised {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, 'supervise', '--', ...serveFlags], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  // Complete JSON lines only (the child's own log lines share the stream).
  const logs = () =>
    err
      .split('\n')
      .slice(0, -1)
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch {
          return [];
        }
      });
  return { child, logs, exited };
}

/** Polls until `fn` holds; fails (instead of hanging) after 60 s. */
async function until(fn: () => boolean | Promise<boolean>, what: string, s?: Supervised): Promise<void> {
  for (const end = Date.now() + 60_000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
    if (await fn()) return;
  }
  throw new Error(`never saw: ${what}\n${JSON.stringify(s?.logs() ?? [], null, 1)}`);
}

// Bounded: a process that took the port may accept and never answer.
const answers = (url: string) =>
  fetch(`${url}/livez`, { signal: AbortSignal.timeout(5000) }).then(
    (r) => r.ok,
    () => false,
  );

/**
 * `outpost supervise -- --listen 127.0.0.1:PORT ...flags` on a free port, once its first child
 * serves. A child that could not bind the port (taken by another process since it was found free:
 * exit code 4, which the supervisor restarts on the same port) ends that supervisor, and
 * onFreePort starts another on another port.
 */
function superviseOnFreePort(flags: string[]): Promise<{ s: Supervised; url: string }> {
  return onFreePort('supervise', async (port) => {
    const url = `http://127.0.0.1:${port}`;
    const s = supervise(['--listen', `127.0.0.1:${port}`, ...flags]);
    const listenFailed = () =>
      s
        .logs()
        .some(
          (l) => l.msg === 'child crashed; restarting after backoff' && l.exitCode === ExitCode.ListenFailed,
        );
    // SIGTERM: the supervisor forwards it to a child it runs, leaving no orphan.
    const end = async () => {
      s.child.kill('SIGTERM');
      await s.exited;
    };
    try {
      await until(async () => listenFailed() || (await answers(url)), 'the first child serving', s);
    } catch (e) {
      await end();
      throw e;
    }
    if (!listenFailed()) return { s, url };
    await end();
    throw Object.assign(new Error(`the first child could not listen on ${port}`), {
      exitCode: ExitCode.ListenFailed,
    });
  });
}

test('a crashing child is restarted with backoff; SIGTERM is forwarded and ends supervision with 0', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-supervise-cli-'));
  const { s, url } = await superviseOnFreePort([
    '--data-dir',
    dir,
    '--runtime-endpoint',
    `unix://${join(dir, 'no-runtime.sock')}`,
    '--log-level',
    'error',
  ]).catch((e: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  });
  try {
    const started = () => s.logs().filter((l) => l.msg === 'child started');
    // The restarted child below takes the same port on purpose: the supervisor passes the same flags.
    const first = started()[0]!.childPid as number;
    assert.is(started().length, 1);

    process.kill(first, 'SIGKILL'); // a crash the supervisor did not ask for
    await until(() => started().length === 2, 'a second child', s);
    const crash = s.logs().find((l) => l.msg === 'child crashed; restarting after backoff')!;
    assert.is(crash.exitCode, 128 + 9);
    assert.is(crash.signal, 'SIGKILL');
    assert.is(crash.delayMs, 1000, 'the first step of the default curve');
    assert.is(crash.component, 'supervise');
    const second = started()[1]!.childPid as number;
    assert.is.not(second, first);
    await until(() => answers(url), 'the restarted child serving', s);

    s.child.kill('SIGTERM');
    assert.is(await s.exited, 0, 'the child shut down cleanly and supervision ended with its code');
    const end = s.logs().at(-1)!;
    assert.is(end.msg, 'child exited after a forwarded signal; not restarting');
    assert.is(started().length, 2);
    assert.not.ok(await answers(url), 'nothing serves any more');
  } finally {
    s.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a configuration error is not restarted: supervision ends with exit code 2', async () => {
  const s = supervise(['--listen', 'not-an-address']);
  try {
    assert.is(await s.exited, ExitCode.InvalidConfig);
    const started = s.logs().filter((l) => l.msg === 'child started');
    assert.is(started.length, 1);
    const end = s.logs().at(-1)!;
    assert.is(end.msg, 'child exited with a configuration error; not restarting');
    assert.is(end.exitCode, ExitCode.InvalidConfig);
  } finally {
    s.child.kill('SIGKILL');
  }
});

test("the served child runs on the supervisor's runtime: deno gets `run -A` before the entry file", () => {
  const entry = process.argv[1];
  assert.equal(serveCommandLine(['--listen', ':1'], 'deno').args.slice(0, 5), [
    'run',
    '-A',
    entry,
    'serve',
    '--listen',
  ]);
  const bun = serveCommandLine([], 'bun');
  assert.is(bun.command, process.execPath);
  assert.ok(bun.args.includes('serve'));
});

test.run();
