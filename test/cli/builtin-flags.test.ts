// Node's modules loaded with their shipped code caches under the small-board V8 flags
// (lib/cli/builtin-flags.ts): which flags the window puts back to their defaults, and, in a real
// node started with the unit's flags, that a module loaded through it takes its cache (Node's
// NODE_DEBUG_NATIVE=CODE_CACHE says so) while one loaded plainly does not, that the heap keeps the
// flags' sizes, and that V8's flags are as given afterwards (a code cache made before is taken).
// The bundle's `serve` under the flags: test/e2e/code-cache.test.ts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { builtinFlagWindow, flagSetting, withBuiltinCaches } from '#lib/cli/builtin-flags.ts';
import { SMALL_BOARD_FLAGS } from '#lib/cli/supervise.ts';

const V8_11 = '11.3.244.8-node.33';
const onV8_11 = process.versions.v8.startsWith('11.');
const dir = mkdtempSync(join(tmpdir(), 'outpost-builtin-flags-'));

test.after(() => rmSync(dir, { recursive: true, force: true }));

test('flagSetting: each spelling of a flag names one setting', () => {
  assert.is(flagSetting('--no-opt'), '--turbofan');
  assert.is(flagSetting('--opt=false'), '--turbofan');
  assert.is(flagSetting('--no_turbofan'), '--turbofan');
  assert.is(flagSetting('--max_old_space_size=64'), '--max-old-space-size');
});

test('the window: the unit flags to their defaults and back, the rest left alone', () => {
  const w = builtinFlagWindow(
    [...SMALL_BOARD_FLAGS, '--inspect=0', '--heapsnapshot-signal=SIGUSR2'],
    '',
    V8_11,
  );
  assert.equal(w, {
    defaults:
      '--max-semi-space-size=0 --max-old-space-size=0 --turbofan --no-flush-baseline-code --bytecode-old-age=5 --no-optimize-for-size --no-compact-on-every-full-gc --initial-old-space-size=0',
    given: SMALL_BOARD_FLAGS.join(' '),
  });
  // NODE_OPTIONS first, as V8 applies them; a setting named twice is put back once.
  assert.equal(builtinFlagWindow(['--max-old-space-size=128'], ' --max_old_space_size=64 ', V8_11), {
    defaults: '--max-old-space-size=0',
    given: '--max_old_space_size=64 --max-old-space-size=128',
  });
});

test('no window without a flag it knows, on another V8 than 11, or without a JIT', () => {
  assert.is(builtinFlagWindow(['--inspect', '--max-lazy'], '', V8_11), undefined);
  // `node --lite-mode outpost.cjs supervise` gives its child the unit's flags too (health.md).
  assert.is(builtinFlagWindow(['--lite-mode', ...SMALL_BOARD_FLAGS], '', V8_11), undefined);
  assert.is(builtinFlagWindow([...SMALL_BOARD_FLAGS], '--jitless', V8_11), undefined);
  assert.is(builtinFlagWindow([], '', V8_11), undefined);
  assert.is(builtinFlagWindow([...SMALL_BOARD_FLAGS], '', '12.4.254.21-node.33'), undefined);
  const req = (() => undefined) as unknown as NodeJS.Require;
  assert.is(withBuiltinCaches(req, undefined), req);
});

/** Runs `code` (an ES module that may import Outpost's sources) in a node started with the unit's flags. */
function underUnitFlags(code: string, extraFlags: string[] = []) {
  const r = spawnSync(
    process.execPath,
    [...SMALL_BOARD_FLAGS, ...extraFlags, '--import', 'tsx', '--input-type=module', '-e', code],
    {
      cwd: join(import.meta.dirname, '../..'),
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, NODE_DEBUG_NATIVE: 'CODE_CACHE' },
    },
  );
  assert.is(r.status, 0, r.stderr);
  return r;
}

/** What Node said of a module's code cache: accepted, rejected or nothing. */
const verdict = (stderr: string, id: string) =>
  new RegExp(`Code cache of ${id} \\(\\w+\\) is (accepted|rejected)`).exec(stderr)?.[1];

test('under the unit flags, a module loaded through the window takes its code cache', () => {
  const { stdout, stderr } = underUnitFlags(`
import { createRequire } from 'node:module';
import { getHeapStatistics } from 'node:v8';
import { builtinFlagWindow, withBuiltinCaches } from '#lib/cli/builtin-flags.ts';
const plain = createRequire(import.meta.url);
plain('node:dgram');
const req = withBuiltinCaches(plain, builtinFlagWindow(process.execArgv, process.env.NODE_OPTIONS));
req('node:http2');
req('node:zlib');
process.stdout.write(String(getHeapStatistics().heap_size_limit));`);
  // The control: without the window, the unit's flags cost the module its cache.
  assert.is(verdict(stderr, 'dgram'), 'rejected', stderr);
  assert.is(verdict(stderr, 'http2'), onV8_11 ? 'accepted' : 'rejected', stderr);
  assert.is(verdict(stderr, 'zlib'), onV8_11 ? 'accepted' : 'rejected', stderr);
  // --max-old-space-size=128 still bounds the heap (V8 sized it at start): far below Node's default 4 GB.
  assert.ok(Number(stdout) < 256 * 1024 * 1024, stdout);
});

test('under the unit flags, what listen() loads by itself is preloaded with its code cache', () => {
  const code = (preload: boolean) => `
import { createServer } from 'node:net';
import { builtinFlagWindow, preloadLazyBuiltins } from '#lib/cli/builtin-flags.ts';
${preload ? 'preloadLazyBuiltins(builtinFlagWindow(process.execArgv, process.env.NODE_OPTIONS));' : ''}
const srv = createServer().listen(0, '127.0.0.1', () => srv.close());`;
  // The control: listen() loads both itself, compiled from source under the unit's flags.
  const plain = underUnitFlags(code(false)).stderr;
  assert.is(verdict(plain, 'cluster'), 'rejected', plain);
  assert.is(verdict(plain, 'dns'), 'rejected', plain);
  const preloaded = underUnitFlags(code(true)).stderr;
  assert.is(verdict(preloaded, 'cluster'), onV8_11 ? 'accepted' : 'rejected', preloaded);
  assert.is(verdict(preloaded, 'dns'), onV8_11 ? 'accepted' : 'rejected', preloaded);
});

test("after the window V8's flags are as given: a code cache made under them is taken", () => {
  const cacheFile = join(dir, 'probe.v8');
  const source = JSON.stringify('(function probe(a) { return [a, a * 2, String(a)]; })');
  const compile = `import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { Script } from 'node:vm';
const file = ${JSON.stringify(cacheFile)};
const cachedData = existsSync(file) ? readFileSync(file) : undefined;
const s = new Script(${source}, { filename: 'probe.js', ...(cachedData ? { cachedData } : {}) });
if (!cachedData) writeFileSync(file, s.createCachedData());
process.stdout.write(cachedData ? (s.cachedDataRejected ? 'rejected' : 'accepted') : 'made');`;
  assert.is(underUnitFlags(compile).stdout, 'made');
  const windowed = `import { createRequire } from 'node:module';
import { builtinFlagWindow, withBuiltinCaches } from '#lib/cli/builtin-flags.ts';
withBuiltinCaches(createRequire(import.meta.url), builtinFlagWindow(process.execArgv, process.env.NODE_OPTIONS))('node:http2');
${compile}`;
  assert.is(underUnitFlags(windowed).stdout, 'accepted');
  // The control: other flags than the cache's make V8 refuse it.
  assert.is(underUnitFlags(compile, ['--no-flush-bytecode']).stdout, 'rejected');
});

test.run();
