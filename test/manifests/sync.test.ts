import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import { silentLogger } from '#lib/log.ts';
import { parseManifest } from '#lib/manifests/parse.ts';
import { ManifestSync } from '#lib/manifests/sync.ts';
import { createStore } from '#lib/store/index.ts';

const pod = (name: string, extra = '') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}${extra}
spec:
  containers:
    - name: main
      image: busybox:1.36
`;

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-manifests-'));
  const store = createStore(openMetabase(':memory:'), {
    host: 'edge-1',
    now: () => Date.parse('2026-01-01T00:00:00Z'),
  });
  const sync = new ManifestSync({ dir, nodeName: 'edge-1', store, log: silentLogger });
  return { dir, store, sync, done: () => rmSync(dir, { recursive: true, force: true }) };
}

test('parse: multi-document YAML, List and JSON, with line numbers on errors', async () => {
  const multi = await parseManifest('a.yaml', `${pod('a')}---\n${pod('b')}---\n`);
  assert.equal(
    multi.objects.map((o) => o.object.metadata.name),
    ['a', 'b'],
  );
  assert.equal(multi.objects[1]!.line, 10);
  const list = await parseManifest(
    'l.json',
    JSON.stringify({ kind: 'List', items: [{ kind: 'Pod', metadata: { name: 'x' } }] }),
  );
  assert.equal(list.objects[0]!.object.kind, 'Pod');
  const typed = await parseManifest('p.yaml', 'kind: PodList\nitems:\n  - metadata: {name: y}\n');
  assert.equal(typed.objects[0]!.object.kind, 'Pod');
  const broken = await parseManifest(
    'bad.yaml',
    `${pod('ok')}---\nkind: Pod\nmetadata:\n  name: [unclosed\n`,
  );
  assert.is(broken.objects.length, 1);
  assert.ok(broken.problems[0]!.line! >= 10, `line ${broken.problems[0]!.line}`);
  assert.is(
    (await parseManifest('k.yaml', 'metadata: {name: z}\n')).problems[0]!.message,
    "Object 'Kind' is missing",
  );
  assert.is((await parseManifest('s.yaml', '- 1\n- 2\n')).problems.length, 1);
});

test('parse: JSON takes a faster path with the same outcome as the YAML parser', async () => {
  const items = [
    {
      kind: 'Pod',
      metadata: { name: 'a', labels: { 'x/y': 'a:b' } },
      spec: { containers: [{ name: 'c', image: 'i:1', args: ['"q"', '\\', '{'] }] },
    },
    {
      kind: 'ConfigMap',
      metadata: { name: 'b' },
      data: { big: '9007199254740993', n: 1.5, t: true, z: null, e: '' },
    },
  ];
  const text = JSON.stringify({ apiVersion: 'v1', kind: 'List', items }, null, 2);
  // A leading comment line makes the same text YAML only: the YAML parser reads it (one line lower).
  const viaYaml = async (t: string) => {
    const r = await parseManifest('m.json', `# yaml\n${t}`);
    const up = <T extends { line?: number }>(x: T) => (x.line ? { ...x, line: x.line - 1 } : x);
    return { objects: r.objects.map(up), problems: r.problems.map(up) };
  };
  const viaJson = await parseManifest('m.json', `\n\n${text}`);
  assert.equal(viaJson.problems, []);
  assert.equal(viaJson, await viaYaml(`\n\n${text}`));
  assert.equal(
    viaJson.objects.map((o) => o.line),
    [3, 3],
  );
  // Outcomes with problems are the YAML parser's, messages included.
  for (const bad of [
    '{"kind": "Pod", "metadata": {"name": "a", "name": "b"}}', // a repeated key
    '{"kind": "Pod", "metadata": {"name": "a"}', // unclosed
    '[1, 2]',
    '{}',
    '{"kind": "PodList", "items": 3}',
    JSON.stringify({ kind: 'List', items: new Array(60_000).fill(0) }), // more nodes than a file may have
  ]) {
    assert.equal(await parseManifest('m.json', bad), await viaYaml(bad), bad);
  }
  // Over the size of an object: the YAML parser's size check answers, as for any manifest.
  const big = JSON.stringify({
    kind: 'ConfigMap',
    metadata: { name: 'big' },
    data: { a: 'x'.repeat(1_100_000) },
  });
  assert.match((await parseManifest('m.json', big)).problems[0]!.message, /a document is 1\.0 MiB of YAML/);
});

test('sync: defaults namespace, uid, creationTimestamp and nodeName', async () => {
  const { dir, store, sync, done } = setup();
  writeFileSync(join(dir, 'web.yaml'), pod('web'));
  const report = await sync.sync();
  assert.is(report.applied, 1);
  const p = store.pods.get('default', 'web')!;
  assert.is(p.spec.nodeName, 'edge-1');
  assert.is(p.metadata.creationTimestamp, '2026-01-01T00:00:00Z');
  assert.match(p.metadata.uid!, /^[0-9a-f-]{36}$/);
  assert.is(p.spec.restartPolicy, 'Always');
  assert.is(p.status?.phase, 'Pending');
  done();
});

test('sync: a broken file is reported and skipped, and never removes pods it defined before', async () => {
  const { dir, store, sync, done } = setup();
  const file = join(dir, 'web.yaml');
  writeFileSync(file, pod('web'));
  await sync.sync();
  const uid = store.pods.get('default', 'web')!.metadata.uid;
  writeFileSync(file, 'kind: Pod\nmetadata: {name: web\n');
  const report = await sync.sync();
  assert.is(report.problems.length, 1);
  assert.is(report.problems[0]!.file, file);
  assert.ok(report.problems[0]!.line);
  assert.is(store.pods.get('default', 'web')?.metadata.uid, uid, 'the pod stays');
  writeFileSync(file, pod('web').replace('image: busybox:1.36', 'image: ""'));
  const invalid = await sync.sync();
  assert.match(invalid.problems[0]!.message, 'spec.containers[0].image: Required value');
  assert.ok(store.pods.get('default', 'web'), 'an invalid pod does not remove the stored one');
  done();
});

test('sync: changes are applied, unchanged files write nothing, removed files remove their pods', async () => {
  const { dir, store, sync, done } = setup();
  writeFileSync(join(dir, 'a.yaml'), `${pod('a')}---\n${pod('b')}`);
  writeFileSync(join(dir, 'notes.txt'), 'not a manifest');
  await sync.sync();
  const rv = store.rv.current;
  assert.is((await sync.sync()).applied, 0);
  assert.is(store.rv.current, rv, 'no write for unchanged manifests');
  writeFileSync(join(dir, 'a.yaml'), pod('a', '\n  labels: {app: a}'));
  const r = await sync.sync();
  assert.is(r.applied, 1);
  assert.is(r.removed, 1, 'b left the file');
  assert.equal(store.pods.get('default', 'a')!.metadata.labels, { app: 'a' });
  assert.not.ok(store.pods.get('default', 'b'));
  unlinkSync(join(dir, 'a.yaml'));
  assert.is((await sync.sync()).removed, 1);
  assert.is(store.pods.list().items.length, 0);
  done();
});

test('sync: the same pod in two files is reported once, the first file wins', async () => {
  const { dir, store, sync, done } = setup();
  writeFileSync(join(dir, 'a.yaml'), pod('web'));
  writeFileSync(join(dir, 'b.yaml'), pod('web', '\n  labels: {from: b}'));
  const r = await sync.sync();
  assert.match(r.problems[0]!.message, 'already defined in');
  assert.is(store.pods.get('default', 'web')!.metadata.labels, undefined);
  done();
});

test('sync: the watcher reflects a new file within a second', async () => {
  const { dir, store, sync, done } = setup();
  await sync.sync();
  sync.watch((e) => assert.unreachable(String(e)));
  writeFileSync(join(dir, 'late.yaml'), pod('late'));
  const deadline = Date.now() + 3000;
  while (!store.pods.get('default', 'late') && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  sync.close();
  assert.ok(store.pods.get('default', 'late'));
  done();
});

test.run();
