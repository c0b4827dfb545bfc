// `outpost serve` from the bundle runs the serve script with a V8 code cache (lib/cli/code-cache.ts):
// the first start writes the cache once it has answered, the next start takes it (V8 accepts it:
// the file is not written again) and answers the same; a cache directory that cannot be written,
// and OUTPOST_CODE_CACHE=off, change nothing but the compile; under the unit's V8 flags Node's own
// modules take their code caches too (lib/cli/builtin-flags.ts) and the next start the script's.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SMALL_BOARD_FLAGS } from '#lib/cli/supervise.ts';
import { waitFor } from '../helpers/lab.ts';
import { ensureBundle, onFreePort } from '../helpers/outpost-process.ts';

const dir = mkdtempSync(join(tmpdir(), 'outpost-code-cache-e2e-'));
const manifests = join(dir, 'manifests');
const children = new Set<ChildProcess>();

/**
 * Starts `serve` with OUTPOST_CODE_CACHE=`cache` and resolves once GET /api/v1/pods lists the pod,
 * on a free port (another one when that was taken before serve bound it: onFreePort).
 */
const start = (cache: string, dataDir: string, nodeFlags: readonly string[] = []) =>
  onFreePort('code-cache serve', (port) => startOn(cache, dataDir, port, nodeFlags));

async function startOn(cache: string, dataDir: string, port: number, nodeFlags: readonly string[]) {
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    [
      ...nodeFlags,
      ensureBundle(),
      'serve',
      '--listen',
      `127.0.0.1:${port}`,
      '--data-dir',
      dataDir,
      '--manifests',
      manifests,
      '--node-name',
      'code-cache',
      '--runtime-endpoint',
      `unix://${join(dir, 'no-runtime.sock')}`,
    ],
    // NODE_DEBUG_NATIVE: Node says on stderr whether each of its modules took its code cache.
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, OUTPOST_CODE_CACHE: cache, NODE_DEBUG_NATIVE: 'CODE_CACHE' },
    },
  );
  children.add(child);
  let logs = '';
  child.stderr!.on('data', (d) => {
    logs += d;
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const listed = await waitFor(async () => {
    if (child.exitCode !== null) {
      children.delete(child);
      // Its exit code goes with the error: onFreePort starts again on another port after a listen failure.
      throw Object.assign(new Error(`outpost exited ${child.exitCode}:\n${logs}`), {
        exitCode: child.exitCode,
      });
    }
    // Bounded: a process that took the port may accept and never answer.
    const res = await fetch(`${url}/api/v1/namespaces/default/pods`, {
      signal: AbortSignal.timeout(5000),
    }).catch(() => undefined);
    const items = res?.ok ? ((await res.json()) as { items: { metadata: { name: string } }[] }).items : [];
    return items.map((p) => p.metadata.name).join(',') === 'web' ? true : undefined;
  }, 120_000);
  assert.ok(listed, logs);
  return {
    logs: () => logs,
    /** SIGTERM, and the exit code. */
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      children.delete(child);
      return code;
    },
  };
}

const cacheFiles = (cache: string) =>
  existsSync(cache) ? readdirSync(cache).filter((f) => f.startsWith('serve-script-')) : [];

test.before(() => {
  mkdirSync(manifests);
  const pod = `apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default}\nspec: {containers: [{name: main, image: busybox:1.36}]}\n`;
  writeFileSync(join(manifests, 'web.yaml'), pod);
});

test.after(async () => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Starts serve until it has written its code cache, stops it and starts it again; checks that the
 * second start took the cache (the file not written anew). Returns the first start's logs and the file.
 */
async function twoStarts(cache: string, dataDir: string, nodeFlags: readonly string[] = []) {
  const first = await start(cache, dataDir, nodeFlags);
  // Written after the first answer and every part's start, in the background.
  const written = await waitFor(() => (cacheFiles(cache).length === 1 ? true : undefined), 120_000);
  assert.ok(written, first.logs());
  assert.is(await first.stop(), 0);
  const [name] = cacheFiles(cache);
  const file = join(cache, name!);
  const before = statSync(file);
  const second = await start(cache, dataDir, nodeFlags);
  assert.is(await second.stop(), 0, second.logs());
  const after = statSync(file);
  assert.equal(
    [after.ino, after.mtimeMs],
    [before.ino, before.mtimeMs],
    'V8 took the cache: not written anew',
  );
  return { firstLogs: first.logs(), name: name!, mode: before.mode };
}

test('the first start writes the cache once warm; the next one takes it and answers the same', async () => {
  const cache = join(dir, 'cache');
  const { name, mode } = await twoStarts(cache, join(dir, 'data'));
  assert.is(mode & 0o777, 0o600);
  assert.equal(cacheFiles(cache), [name]);
});

test("under the unit's V8 flags: Node's modules take their caches, the next start the serve script's", async () => {
  const { firstLogs } = await twoStarts(join(dir, 'cache-flags'), join(dir, 'data-flags'), SMALL_BOARD_FLAGS);
  // Modules the serve script loads itself (lib/cli/builtin-flags.ts), on Node 20, and two that
  // Node loads inside listen(), preloaded through the window (preloadLazyBuiltins).
  const expected = process.versions.v8.startsWith('11.') ? 'accepted' : 'rejected';
  for (const id of ['http', '_http_server', 'net', 'crypto', 'cluster', 'dns'])
    assert.match(firstLogs, new RegExp(`Code cache of ${id} \\(\\w+\\) is ${expected}`), id);
});

test('a cache directory that cannot be made, or none at all: serve runs the same', async () => {
  // A file where the directory should be (root may write anywhere else).
  const blocked = join(dir, 'a-file');
  writeFileSync(blocked, '');
  const a = await start(join(blocked, 'cache'), join(dir, 'data-blocked'));
  assert.is(await a.stop(), 0, a.logs());
  const b = await start('off', join(dir, 'data-off'));
  assert.is(await b.stop(), 0, b.logs());
  assert.ok(!existsSync(join(process.cwd(), 'off')), 'off is not a directory name');
});

test.run();
