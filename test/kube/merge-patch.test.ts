import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { applyMergePatch, createMergePatch, isEmptyPatch } from '#lib/kube/merge-patch.ts';

test('apply follows RFC 7386: objects merge, null deletes, lists and scalars replace', () => {
  const target = { a: 'b', c: { d: 'e', f: 'g' }, list: [1, 2] };
  const patched = applyMergePatch(target, { a: 'z', c: { f: null }, list: [3], n: { x: 1 } });
  assert.equal(patched, { a: 'z', c: { d: 'e' }, list: [3], n: { x: 1 } });
  assert.equal(target, { a: 'b', c: { d: 'e', f: 'g' }, list: [1, 2] }, 'the target is not modified');
  assert.equal(applyMergePatch({ a: 1 }, ['x']), ['x']);
});

test('create produces the patch that apply turns back into the target', () => {
  const from = { metadata: { name: 'd', labels: { a: '1', b: '2' } }, spec: { p: [{ v: '1' }], k: 'x' } };
  const to = { metadata: { name: 'd', labels: { a: '1', c: '3' } }, spec: { p: [{ v: '2' }], k: 'x' } };
  const patch = createMergePatch(from, to);
  assert.equal(patch, { metadata: { labels: { b: null, c: '3' } }, spec: { p: [{ v: '2' }] } });
  assert.equal(applyMergePatch(from, patch), to);
  assert.ok(isEmptyPatch(createMergePatch(to, structuredClone(to))));
});

test.run();
