// The serve script's V8 code cache (lib/cli/code-cache.ts): where it lives, that a script runs with
// and without one, that a cache V8 accepts is used and not written again, and that a damaged,
// foreign or writable-by-others cache is not used. The real serve script under `serve` is covered
// end to end by test/e2e/code-cache.test.ts.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  codeCacheDir,
  codeCacheFile,
  loadServeScript,
  readOwnCache,
  writeCache,
} from '#lib/cli/code-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'outpost-code-cache-'));
/**
 * A serve script as scripts/build.mjs makes one (a function expression called like a CommonJS
 * wrapper); `tag` makes its source differ from the others', so V8's in-process compilation cache
 * never stands in for the code cache under test.
 */
function serveScript(name: string, tag: string): string {
  const file = join(dir, `serve-script-${name}.mjs`);
  writeFileSync(
    file,
    `(function (exports, require, module, __filename, __dirname, import_meta_url) {"use strict";
// ${tag}
const { basename } = require('node:path');
function twice(x) { return x * 2; }
module.exports.main = async (argv, hooks) => {
  globalThis.ran = { argv, file: basename(__filename), url: import_meta_url, twice: twice(21) };
  hooks.onWarm?.();
};
})`,
  );
  return file;
}
const script = serveScript('ABC123', 'the first');

/** Loads `file` with `cache` in a new process: `cached` when V8 took the cache, else `compiled`. */
function loadElsewhere(file: string, cache: string): string {
  const code = `import { loadServeScript } from '#lib/cli/code-cache.ts';
const r = loadServeScript(${JSON.stringify(file)}, ${JSON.stringify(cache)});
await r.main([], {});
process.stdout.write(r.save ? 'compiled' : 'cached');`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: join(import.meta.dirname, '../..'),
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.is(r.status, 0, r.stderr);
  return r.stdout;
}

test.after(() => rmSync(dir, { recursive: true, force: true }));

test('the cache directory: OUTPOST_CODE_CACHE, then systemd, then XDG or ~/.cache', () => {
  assert.is(codeCacheDir({ OUTPOST_CODE_CACHE: '/c', CACHE_DIRECTORY: '/var/cache/outpost' }), '/c');
  assert.is(codeCacheDir({ OUTPOST_CODE_CACHE: 'off', HOME: '/root' }), undefined);
  assert.is(codeCacheDir({ OUTPOST_CODE_CACHE: '', HOME: '/root' }), undefined);
  assert.is(codeCacheDir({ CACHE_DIRECTORY: '/var/cache/outpost:/var/cache/other' }), '/var/cache/outpost');
  assert.is(codeCacheDir({ XDG_CACHE_HOME: '/x', HOME: '/root' }), '/x/outpost');
  assert.is(codeCacheDir({ HOME: '/root' }), '/root/.cache/outpost');
  assert.is(codeCacheDir({}), undefined);
  const file = codeCacheFile('/c', script);
  assert.ok(file.startsWith('/c/serve-script-ABC123-node'), file);
  assert.ok(file.endsWith(`${process.version}-${process.arch}.v8`), file);
});

test('a first run writes the cache when warm; the next one uses it and writes nothing', async () => {
  const cache = codeCacheFile(join(dir, 'cache'), script);
  const first = loadServeScript(script, cache);
  assert.type(first.save, 'function');
  await first.main(['node', 'outpost.mjs', 'serve'], { onWarm: first.save! });
  const ran = (globalThis as { ran?: Record<string, unknown> }).ran!;
  assert.equal(ran, {
    argv: ['node', 'outpost.mjs', 'serve'],
    file: 'serve-script-ABC123.mjs',
    url: `file://${script}`,
    twice: 42,
  });
  const written = readFileSync(cache);
  assert.ok(written.length > 0);
  assert.is(readdirSync(join(dir, 'cache')).length, 1, 'no temporary file left');
  assert.is(loadElsewhere(script, cache), 'cached', 'an accepted cache is not written again');
  assert.equal(readFileSync(cache), written);
});

test('no cache directory: the script runs, nothing is written', async () => {
  const { main, save } = loadServeScript(script, undefined);
  assert.is(save, undefined);
  await main(['node', 'outpost.mjs', 'serve'], {});
});

test('a damaged cache is rejected by V8: the script runs and the cache is written anew', async () => {
  const damaged = serveScript('DAMAGED', 'damaged');
  const cache = codeCacheFile(join(dir, 'damaged'), damaged);
  writeCache(cache, Buffer.from('not a V8 code cache, long enough to be looked at'.repeat(4)));
  const { main, save } = loadServeScript(damaged, cache);
  assert.type(save, 'function');
  await main(['node', 'outpost.mjs', 'serve'], {});
  assert.is((globalThis as { ran?: { twice: number } }).ran!.twice, 42);
  save!();
  assert.ok(!readFileSync(cache).toString('latin1').includes('not a V8 code cache'));
  assert.is(loadElsewhere(damaged, cache), 'cached', 'the new cache is accepted');
});

test("another build's cache is rejected: the script runs and the cache is written anew", () => {
  const before = serveScript('OTHER', 'one build');
  const cache = codeCacheFile(join(dir, 'other'), before);
  const first = loadServeScript(before, cache);
  first.save!();
  // The same file name, another content (as if the name's hash had not changed).
  serveScript('OTHER', 'another build, longer than the first one');
  assert.is(loadElsewhere(before, cache), 'compiled');
});

test('a cache others may write is not used', () => {
  const cache = codeCacheFile(join(dir, 'shared'), script);
  writeCache(cache, Buffer.from('cache'));
  assert.ok(readOwnCache(cache));
  chmodSync(cache, 0o666);
  assert.is(readOwnCache(cache), undefined);
  chmodSync(cache, 0o620);
  assert.is(readOwnCache(cache), undefined);
  assert.is(readOwnCache(join(dir, 'shared', 'missing.v8')), undefined);
});

test('writing a cache keeps the three newest of other builds', () => {
  const caches = join(dir, 'prune');
  const old = ['A', 'B', 'C', 'D', 'E'].map((h, i) => {
    const f = codeCacheFile(caches, join(dir, `serve-script-${h}.mjs`));
    writeCache(f, Buffer.from(h));
    utimesSync(f, 1_000 + i, 1_000 + i);
    return f;
  });
  writeCache(codeCacheFile(caches, script), Buffer.from('current'));
  const left = readdirSync(caches).sort();
  assert.equal(
    left,
    [codeCacheFile(caches, script), ...old.slice(2)].map((f) => f.slice(caches.length + 1)).sort(),
  );
});

test("writing a cache removes what killed writes left: a dead PID's temporary file, any older than a minute", () => {
  const caches = join(dir, 'leftovers');
  const cache = codeCacheFile(caches, script);
  writeCache(cache, Buffer.from('first'));
  // Past pid_max no process can exist: a PID that is dead for sure.
  const dead = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8')) + 1;
  const live = process.ppid;
  const tmp = (pid: number) => `${cache}.${pid}.tmp`;
  const oldTmp = `${codeCacheFile(caches, join(dir, 'serve-script-OLD.mjs'))}.${live}.tmp`;
  for (const f of [tmp(dead), tmp(live), oldTmp, join(caches, 'notes.tmp')]) writeFileSync(f, 'half');
  const minutesAgo = Date.now() / 1000 - 120;
  utimesSync(oldTmp, minutesAgo, minutesAgo);
  writeCache(cache, Buffer.from('second'));
  const left = readdirSync(caches).sort();
  // A live process's fresh file may be a write in progress: it stays.
  assert.equal(
    left,
    [cache, tmp(live), join(caches, 'notes.tmp')].map((f) => f.slice(caches.length + 1)).sort(),
  );
  assert.is(readFileSync(cache, 'utf8'), 'second');
});

test.run();
