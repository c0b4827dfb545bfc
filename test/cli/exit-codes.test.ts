// Every invalid flag, argument or environment value exits 2 (docs/health.md#exit-codes), naming the
// OUTPOST_* variable when the value came from the environment; `outpost supervise` does not restart
// a child that exited 2.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolveServeConfig } from '#lib/config.ts';
import { run } from '../helpers/agent.ts';
import { ensureBundle } from '../helpers/outpost-process.ts';

// The bundle, as installed: a tenth of tsx's start-up time per run.
const bundle = ensureBundle();
const outpost = (args: string[], opts: Parameters<typeof run>[2] = {}) =>
  run(process.execPath, [bundle, ...args], opts);

const env = (extra: Record<string, string>) => ({ ...process.env, ...extra });

const cases: { args: string[]; env?: Record<string, string>; stderr: RegExp }[] = [
  { args: ['serve', '--bogus'], stderr: /unknown option '--bogus'/ },
  { args: ['serve', '--durability', 'sometimes'], stderr: /argument 'sometimes' is invalid/ },
  { args: ['serve', '--max-body-bytes', 'lots'], stderr: /^error: --max-body-bytes: / },
  { args: ['serve'], env: { OUTPOST_RATE_LIMIT: 'fast' }, stderr: /^error: OUTPOST_RATE_LIMIT="fast": / },
  { args: ['serve'], env: { OUTPOST_LISTEN: 'nowhere' }, stderr: /^error: OUTPOST_LISTEN "nowhere"/ },
  { args: ['serve'], env: { OUTPOST_NODE_NAME: 'Not_A_Name' }, stderr: /^error: OUTPOST_NODE_NAME=/ },
  { args: ['no-such-command'], stderr: /unknown command 'no-such-command'/ },
  { args: ['logs'], stderr: /missing required argument 'pod'/ },
  { args: ['get', 'pods', '-o', 'sideways'], stderr: /unable to match a printer/ },
  { args: ['logs', 'web', '--since', '5 minutes'], stderr: /invalid argument "5 minutes" for "--since"/ },
  { args: ['exec', 'web'], stderr: /you must specify at least one command/ },
  {
    args: ['get', 'pods'],
    env: { OUTPOST_SERVER: 'not a url' },
    stderr: /^error: OUTPOST_SERVER "not a url"/,
  },
  { args: ['get', 'pods', '--server', 'ftp://x'], stderr: /^error: --server "ftp:\/\/x"/ },
  { args: ['supervise', '--log-level', 'loud'], stderr: /argument 'loud' is invalid/ },
];

for (const c of cases) {
  const name = `${c.env ? `${Object.entries(c.env)[0]!.join('=')} ` : ''}outpost ${c.args.join(' ')}`;
  test(`${name}: exit 2`, async () => {
    // No server runs on this port: a usage error must be found before anything is asked of one.
    const r = await outpost(c.args, {
      env: env({ OUTPOST_DATA_DIR: '/nonexistent/outpost-never-created', ...(c.env ?? {}) }),
      timeoutMs: 60_000,
    });
    assert.is(r.code, 2, `${r.stdout}${r.stderr}`);
    assert.match(r.stderr, c.stderr);
  });
}

test('help and --version exit 0', async () => {
  for (const args of [['--version'], ['serve', '--help']]) {
    const r = await outpost(args, { timeoutMs: 60_000 });
    assert.is(r.code, 0, r.stderr);
  }
});

test('outpost supervise stops when serve exits 2, without a restart', async () => {
  const r = await outpost(['supervise', '--', '--bogus'], { timeoutMs: 60_000 });
  assert.is(r.code, 2, r.stderr);
  assert.is(r.stderr.match(/"msg":"child started"/g)?.length, 1, r.stderr);
  assert.match(r.stderr, /not restarting/);
});

test('a bad value names its flag, or its variable when it came from the environment', () => {
  const err = (flags: Record<string, unknown>, e: Record<string, string>) => {
    try {
      resolveServeConfig(flags, e);
    } catch (x) {
      return (x as Error).message;
    }
    return 'no error';
  };
  assert.match(err({}, { OUTPOST_MAX_EXEC_SESSIONS: '0' }), /^OUTPOST_MAX_EXEC_SESSIONS="0": /);
  assert.match(err({ maxExecSessions: '0' }, { OUTPOST_MAX_EXEC_SESSIONS: '0' }), /^--max-exec-sessions: /);
  assert.match(err({}, { OUTPOST_INSECURE_ALLOW_UNAUTHENTICATED: 'yes' }), /^OUTPOST_INSECURE_ALLOW/);
});

test.run();
