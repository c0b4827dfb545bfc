// Issue 18, item 5 on the real bundle: hostile and oversized manifests beside good ones. Each is that
// file's error (one warning naming it, a ManifestSkipped event), the good manifests keep working, a
// new good one is picked up while the hostile files stay, and the manifests module never restarts.
// The agent's RSS growth is printed (the bound is measured by `npm run bench:manifests`, not
// asserted: RSS on a shared machine moves with the garbage collector).
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MANIFEST_LIMITS } from '#lib/manifests/limits.ts';
import { aliasBomb, configMaps, manyObjects, podManifest } from '../helpers/manifests.ts';
import { type OutpostProcess, spawnOutpost } from '../helpers/outpost-process.ts';

const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;

async function until<T>(what: string, get: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  for (const end = Date.now() + timeoutMs; ; await new Promise((r) => setTimeout(r, 200))) {
    const v = await get().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  }
}

/** Written beside and renamed in, so the agent never reads half a file. */
function drop(dir: string, name: string, text: string): void {
  writeFileSync(join(dir, `.${name}`), text);
  renameSync(join(dir, `.${name}`), join(dir, name));
}

test('hostile manifests are their files errors; good ones keep working beside them', async () => {
  const root = mkdtempSync(join(tmpdir(), 'outpost-hostile-'));
  const dir = join(root, 'manifests');
  mkdirSync(dir);
  drop(dir, 'good.yaml', podManifest('good'));
  drop(dir, 'limits.yaml', manyObjects(MANIFEST_LIMITS.objects));
  let agent: OutpostProcess | undefined;
  try {
    agent = await spawnOutpost({
      dataDir: join(root, 'data'),
      runtimeEndpoint: `unix://${join(root, 'no-runtime.sock')}`,
      nodeName: 'edge-hostile',
      manifests: dir,
    });
    const a = agent;
    const get = async (path: string) => {
      const r = await fetch(a.url + path);
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    };
    const has = async (path: string) => ((await get(path)).status === 200 ? true : undefined);
    await until('the good pod', () => has('/api/v1/namespaces/default/pods/good'));
    await until('the objects at the limit', () =>
      has(`/api/v1/namespaces/default/configmaps/cm-${MANIFEST_LIMITS.objects - 1}`),
    );
    const before = rssMb(a.pid);

    const hostile: Array<[string, string, RegExp]> = [
      ['bomb.yaml', aliasBomb(), /Excessive alias count/],
      ['huge.yaml', configMaps(1, 50 * 1024 * 1024, 'huge'), /the file is 50\.0 MiB, more than the 3 MiB/],
      ['flood.yaml', manyObjects(10_000), /more than 1000 documents in one file/],
    ];
    for (const [name, text] of hostile) drop(dir, name, text);
    drop(dir, 'late.yaml', podManifest('late'));
    await until('the pod added after the hostile files', () => has('/api/v1/namespaces/default/pods/late'));
    const warnings = (name: string) =>
      a
        .logs()
        .split('\n')
        .filter((l) => l.includes('"manifest skipped"') && l.includes(`/${name}"`))
        .map((l) => JSON.parse(l) as { reason: string; level: string });
    for (const [name, , reason] of hostile) {
      const w = await until(`the warning for ${name}`, async () =>
        warnings(name).length ? warnings(name) : undefined,
      );
      assert.is(w.length, 1, `one warning for ${name}: ${JSON.stringify(w)}`);
      assert.is(w[0]!.level, 'warn');
      assert.match(w[0]!.reason, reason);
    }
    const events = await until('three ManifestSkipped events', async () => {
      const items = (await get('/api/v1/namespaces/default/events')).body.items as Array<{
        reason: string;
        message: string;
      }>;
      const mine = items.filter((e) => e.reason === 'ManifestSkipped');
      return mine.length >= 3 ? mine : undefined;
    });
    for (const [name] of hostile)
      assert.ok(
        events.some((e) => e.message.startsWith(`manifest ${name}`)),
        `an event for ${name}: ${JSON.stringify(events)}`,
      );
    assert.is(
      (await get('/api/v1/namespaces/default/configmaps/huge-0')).status,
      404,
      'nothing of huge.yaml stored',
    );
    assert.is((await get('/api/v1/namespaces/default/pods/good')).status, 200);
    const health = await (await fetch(`${a.url}/readyz?verbose`)).text();
    assert.match(health, /\[\+\]manifests ok/, health);
    // After two more rescans: still one warning each, nothing restarted.
    await new Promise((r) => setTimeout(r, 11_000));
    for (const [name] of hostile) assert.is(warnings(name).length, 1, name);
    assert.match(await (await fetch(`${a.url}/readyz?verbose`)).text(), /\[\+\]manifests ok/);
    const metrics = await (await fetch(`${a.url}/metrics`)).text();
    assert.match(
      metrics,
      /outpost_module_restarts_total\{module="manifests"\} 0\b/,
      'the manifests module never restarted',
    );
    console.log(
      `  agent RSS ${before.toFixed(1)} MB with ${MANIFEST_LIMITS.objects} objects loaded -> ${rssMb(a.pid).toFixed(1)} MB with the hostile files beside them`,
    );
  } finally {
    await agent?.kill9();
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
