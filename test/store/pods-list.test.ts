// PodStore.list reads keys and resourceVersions first and serves the pods it has at that version
// from its cache: what it lists must be what the metabase holds now, whoever changed it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import type { Pod } from '#lib/kube/types.ts';
import { createStore } from '#lib/store/index.ts';

const pod = (ns: string, name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: ns },
  spec: { nodeName: 'edge-1', containers: [{ name: 'm', image: 'busybox' }] },
});

function seeded() {
  const mb = openMetabase(':memory:');
  const a = createStore(mb, { host: 'edge-1' });
  for (let i = 0; i < 12; i++) a.pods.put(pod(`ns-${i % 3}`, `p-${String(i).padStart(2, '0')}`), 'api');
  for (const r of a.pods.records()) a.pods.setStatus(r.uid, { phase: 'Running' });
  return { mb, a };
}

const names = (items: Pod[]) => items.map((p) => `${p.metadata.namespace}/${p.metadata.name}`);

test('lists in (namespace, name) order with statuses merged, paginated and by namespace', () => {
  const { a } = seeded();
  const all = a.pods.list().items;
  assert.is(all.length, 12);
  assert.equal(names(all), [...names(all)].sort());
  assert.ok(all.every((p) => p.status?.phase === 'Running'));
  const page = a.pods.list({ after: ['ns-0', 'p-09'], limit: 3 }).items;
  assert.equal(names(page), names(all).slice(4, 7));
  assert.equal(
    names(a.pods.list({ namespace: 'ns-1' }).items),
    names(all).filter((n) => n.startsWith('ns-1/')),
  );
});

test('changes made behind the store (another store on the same metabase) are listed as they are now', () => {
  const { mb, a } = seeded();
  a.pods.list(); // every pod cached at its version
  const b = createStore(mb, { host: 'edge-1' });
  const uid = b.pods.record('ns-1', 'p-04')!.uid;
  b.pods.setStatus(uid, { phase: 'Failed', message: 'changed behind' });
  b.pods.remove('ns-2', 'p-05');
  const listed = a.pods.list().items;
  assert.is(listed.length, 11);
  assert.not.ok(names(listed).includes('ns-2/p-05'));
  const changed = listed.find((p) => p.metadata.name === 'p-04')!;
  assert.is(changed.status?.phase, 'Failed');
  assert.is(changed.status?.message, 'changed behind');
  assert.is(changed.metadata.resourceVersion, String(b.rv.current - 1));
  // Most pods changed behind it: listed as they are too.
  for (const r of b.pods.records()) b.pods.setStatus(r.uid, { phase: 'Succeeded' });
  b.pods.put(pod('ns-0', 'p-new'), 'api');
  const again = a.pods.list().items;
  assert.is(again.length, 12);
  assert.ok(names(again).includes('ns-0/p-new'));
  assert.ok(again.filter((p) => p.metadata.name !== 'p-new').every((p) => p.status?.phase === 'Succeeded'));
});

test.run();
