// The command line `outpost supervise` runs its child with: the small-board V8 settings unless chosen;
// its environment: the malloc settings and a compile cache unless chosen; the same as the unit's.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  childEnvDefaults,
  SMALL_BOARD_FLAGS,
  SMALL_MALLOC_ENV,
  serveCommandLine,
} from '#lib/cli/supervise.ts';

test('the child gets the small-board V8 settings before the entry file and the serve flags', () => {
  const { command, args } = serveCommandLine(['--data-dir', '/d'], 'node', '');
  assert.is(command, process.execPath);
  assert.equal(args.slice(0, SMALL_BOARD_FLAGS.length), [...SMALL_BOARD_FLAGS]);
  assert.equal(args.slice(-3), ['serve', '--data-dir', '/d']);
});

test('a size chosen in NODE_OPTIONS is not overridden; the other is still added', () => {
  const { args } = serveCommandLine([], 'node', '--max-old-space-size=512 --trace-warnings');
  assert.not.ok(args.some((a) => a.startsWith('--max-old-space-size')));
  assert.ok(args.includes('--max-semi-space-size=1'));
});

test('V8 spellings with underscores count as chosen too', () => {
  const { args } = serveCommandLine([], 'node', '--max_semi_space_size=4');
  assert.not.ok(args.some((a) => a.startsWith('--max-semi-space-size')));
  assert.ok(args.includes('--max-old-space-size=128'));
});

test('TurboFan chosen by the caller, in any spelling, is not turned off', () => {
  for (const chosen of ['--opt', '--turbofan', '--no-turbofan', '--no_opt'])
    assert.not.ok(serveCommandLine([], 'node', chosen).args.includes('--no-opt'), chosen);
  assert.ok(serveCommandLine([], 'node', '--max-lazy').args.includes('--no-opt'));
});

test('code flushing chosen by the caller is kept', () => {
  const kept = serveCommandLine([], 'node', '--bytecode-old-age=5 --no-flush-baseline-code').args;
  assert.not.ok(kept.includes('--bytecode-old-age=2'));
  assert.not.ok(kept.includes('--flush-baseline-code'));
  assert.ok(kept.includes('--no-opt'));
});

test('Deno and Bun get no V8 flags on the command line', () => {
  for (const rt of ['deno', 'bun'] as const)
    assert.not.ok(serveCommandLine([], rt, '').args.some((a) => a.startsWith('--max-') || a === '--no-opt'));
});

test('the child inherits the malloc settings and a compile cache where the caller chose none', () => {
  const env: NodeJS.ProcessEnv = {};
  childEnvDefaults(env, '/tmp/x');
  assert.is(env.MALLOC_MMAP_THRESHOLD_, '32768');
  assert.is(env.NODE_COMPILE_CACHE, '/tmp/x/node-compile-cache');
  const chosen: NodeJS.ProcessEnv = { MALLOC_MMAP_THRESHOLD_: '131072', NODE_COMPILE_CACHE: '/c' };
  childEnvDefaults(chosen, '/tmp/x');
  assert.equal(chosen, { MALLOC_MMAP_THRESHOLD_: '131072', NODE_COMPILE_CACHE: '/c' });
});

test('the systemd unit sets the same V8 settings and malloc settings as outpost supervise', () => {
  const unit = readFileSync(new URL('../../deploy/outpost.service', import.meta.url), 'utf8');
  assert.ok(unit.includes(`Environment="OUTPOST_V8_FLAGS=${SMALL_BOARD_FLAGS.join(' ')}"`));
  // On node's command line (NODE_OPTIONS refuses --no-opt), before the entry file.
  assert.match(unit, /^ExecStart=\/usr\/bin\/node \$OUTPOST_V8_FLAGS \/opt\/outpost\/outpost\.cjs serve /m);
  assert.not.match(unit, /NODE_OPTIONS=/);
  for (const [k, v] of Object.entries(SMALL_MALLOC_ENV))
    assert.ok(unit.includes(`Environment=${k}=${v}\n`), k);
});

test.run();
