import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import type { Logger } from '#lib/log.ts';
import { MANIFEST_LIMITS } from '#lib/manifests/limits.ts';
import { parseManifest } from '#lib/manifests/parse.ts';
import { ManifestSync } from '#lib/manifests/sync.ts';
import { createStore } from '#lib/store/index.ts';
import { aliasBomb, configMaps, manyObjects, podManifest } from '../helpers/manifests.ts';

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-limits-'));
  const store = createStore(openMetabase(':memory:'), { host: 'edge-1' });
  const warnings: Array<Record<string, unknown>> = [];
  const log: Logger = {
    debug() {},
    info() {},
    warn: (o) => void warnings.push(o as Record<string, unknown>),
    error() {},
    child: () => log,
  };
  const sync = new ManifestSync({ dir, nodeName: 'edge-1', store, log });
  writeFileSync(join(dir, 'good.yaml'), podManifest('good'));
  const events = () => store.events.list().items.filter((e) => e.reason === 'ManifestSkipped');
  return { dir, store, sync, warnings, events, done: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Each hostile file beside a good one: one warning and one event naming it, the good pod stored. */
function rejects(name: string, write: (file: string) => void, reason: RegExp) {
  test(`sync: ${name} is that file's error, the good manifest beside it works`, async () => {
    const { dir, store, sync, warnings, events, done } = setup();
    const file = join(dir, 'hostile.yaml');
    write(file);
    const r = await sync.sync();
    assert.ok(store.pods.get('default', 'good'), 'the good pod is stored');
    assert.is(warnings.length, 1, JSON.stringify(warnings));
    assert.is(warnings[0]!.file, file);
    assert.match(String(warnings[0]!.reason), reason);
    assert.is(events().length, 1);
    assert.match(events()[0]!.message, /^manifest hostile\.yaml/);
    assert.ok(r.problems.every((p) => p.file === file));
    assert.is(store.objects.records({ source: 'manifest' }).length, 0, 'nothing of the hostile file stored');
    // Later syncs neither log again nor re-read it; a new good file is picked up meanwhile.
    writeFileSync(join(dir, 'late.yaml'), podManifest('late'));
    await sync.sync();
    assert.ok(store.pods.get('default', 'late'));
    assert.is(warnings.length, 1);
    assert.is(events()[0]!.count, 1);
    done();
  });
}

rejects('a YAML alias bomb', (f) => writeFileSync(f, aliasBomb()), /Excessive alias count/);
rejects(
  'a 50 MB file',
  (f) => {
    // Sparse: the size is what stat reports, and the file is refused before it is read.
    writeFileSync(f, 'x');
    truncateSync(f, 50 * 1024 * 1024);
  },
  /the file is 50 MiB, more than the 3 MiB/,
);
rejects(
  '10,000 objects in one file',
  (f) => writeFileSync(f, manyObjects(10_000)),
  /more than 1000 documents/,
);
rejects(
  'a List of 10,000 items',
  (f) => writeFileSync(f, manyObjects(10_000, { list: true })),
  /more than 1000 objects|more than 50000 YAML nodes/,
);
rejects(
  'a 2 MiB object',
  (f) => writeFileSync(f, configMaps(1, 2 * 1024 * 1024)),
  /a document is 2\.0 MiB of YAML, more than the 1 MiB/,
);
rejects(
  'an object that aliases make bigger than 1 MiB',
  (f) => {
    const value = 'x'.repeat(200 * 1024);
    writeFileSync(
      f,
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: grown}\ndata:\n  a: &v ${value}\n  b: *v\n  c: *v\n  d: *v\n  e: *v\n  f: *v\n`,
    );
  },
  /ConfigMap "grown" is more than 1 MiB as JSON/,
);
rejects(
  'nesting deeper than the parser stack',
  (f) => writeFileSync(f, `${'['.repeat(40_000)}${']'.repeat(40_000)}`),
  /Maximum call stack size exceeded|more than/,
);

test('sync: a file at the limits loads whole', async () => {
  const { dir, store, sync, warnings, done } = setup();
  writeFileSync(join(dir, 'many.yaml'), manyObjects(MANIFEST_LIMITS.objects));
  writeFileSync(join(dir, 'big.yaml'), configMaps(3, MANIFEST_LIMITS.objectBytes - 512));
  await sync.sync();
  assert.equal(warnings, []);
  assert.is(store.objects.records({ source: 'manifest' }).length, MANIFEST_LIMITS.objects + 3);
  done();
});

test('parse: a refused file keeps no objects, and the reason has a line', async () => {
  const r = await parseManifest('x.yaml', manyObjects(1001));
  assert.is(r.objects.length, 0);
  assert.ok(r.problems[0]!.line! > 1);
});

test.run();
