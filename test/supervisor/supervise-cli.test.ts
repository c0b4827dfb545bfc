// `outpost supervise` with real processes: the CLI from source supervising `outpost serve`.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { serveCommandLine } from '#lib/cli/supervise.ts';
import { ExitCode } from '#lib/supervisor/exit-codes.ts';
import { freePort } from '../helpers/outpost-process.ts';

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

const answers = (url: string) =>
  fetch(`${url}/livez`).then(
    (r) => r.ok,
    () => false,
  );

test('a crashing child is restarted with backoff; SIGTERM is forwarded and ends supervision with 0', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-supervise-cli-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const s = supervise([
    '--listen',
    `127.0.0.1:${port}`,
    '--data-dir',
    dir,
    '--runtime-endpoint',
    `unix://${join(dir, 'no-runtime.sock')}`,
    '--log-level',
    'error',
  ]);
  try {
    const started = () => s.logs().filter((l) => l.msg === 'child started');
    await until(() => answers(url), 'the first child serving', s);
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
