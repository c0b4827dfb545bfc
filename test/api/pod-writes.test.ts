// Pod writes through app.request: create, replace, the four patch types, delete, deletecollection,
// status, eviction, dry runs, validation and owner enforcement.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Pod } from '#lib/kube/types.ts';
import { testApp } from '../helpers/app.ts';

const t = suite('pod writes');
const base = '/api/v1/namespaces/default/pods';
const json = { 'content-type': 'application/json' };

const pod = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: name } },
  spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] },
  ...extra,
});

function setup() {
  const { app, store } = testApp();
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = json,
  ) => {
    const res = await app.request(path, {
      method,
      headers,
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    // biome-ignore lint/suspicious/noExplicitAny: test bodies are read loosely.
    return { code: res.status, body: (await res.json()) as Record<string, any> };
  };
  return { app, store, call };
}

t('POST creates a pod with the API server defaults, stored as source=api', async () => {
  const { call, store } = setup();
  const r = await call('POST', base, pod('web'));
  assert.is(r.code, 201, JSON.stringify(r.body));
  const p = r.body as Pod;
  assert.is(p.metadata.namespace, 'default');
  assert.ok(p.metadata.uid);
  assert.ok(p.metadata.resourceVersion);
  assert.is(p.metadata.generation, 1);
  assert.is(p.spec.nodeName, 'edge-1');
  assert.is(p.spec.serviceAccountName, 'default');
  assert.equal(p.spec.securityContext, {});
  assert.is(p.spec.restartPolicy, 'Always');
  assert.is(p.spec.containers[0]!.imagePullPolicy, 'IfNotPresent');
  assert.is(p.status?.phase, 'Pending');
  assert.is(store.pods.record('default', 'web')!.source, 'api');
  const mf = p.metadata.managedFields as { manager: string; operation: string }[];
  assert.is(mf[0]!.operation, 'Update');
});

t('POST of a taken name is 409 AlreadyExists; a bad pod is 422 with field causes', async () => {
  const { call } = setup();
  await call('POST', base, pod('web'));
  const dup = await call('POST', base, pod('web'));
  assert.is(dup.code, 409);
  assert.is(dup.body.reason, 'AlreadyExists');
  assert.is(dup.body.message, 'pods "web" already exists');
  const bad = await call('POST', base, {
    metadata: { name: 'Bad_Name' },
    spec: {
      containers: [
        { name: 'a', image: 'x' },
        { name: 'a', image: '' },
      ],
    },
  });
  assert.is(bad.code, 422);
  assert.is(bad.body.reason, 'Invalid');
  const fields = bad.body.details.causes.map((c: { field: string }) => c.field);
  assert.ok(fields.includes('metadata.name'), fields.join());
  assert.ok(fields.includes('spec.containers[1].name'), fields.join());
  assert.ok(fields.includes('spec.containers[1].image'), fields.join());
  const mismatch = await call('POST', base, { ...pod('x'), metadata: { name: 'x', namespace: 'other' } });
  assert.is(mismatch.code, 400);
  const other = await call('POST', base, {
    ...pod('y'),
    spec: { nodeName: 'elsewhere', containers: [{ name: 'm', image: 'i' }] },
  });
  assert.is(other.code, 422);
});

t('generateName and dryRun=All', async () => {
  const { call, store } = setup();
  const gen = await call('POST', base, { ...pod('x'), metadata: { generateName: 'job-' } });
  assert.is(gen.code, 201);
  assert.match(gen.body.metadata.name, /^job-[a-z0-9]{5}$/);
  const dry = await call('POST', `${base}?dryRun=All`, pod('dry'));
  assert.is(dry.code, 201);
  assert.is(dry.body.metadata.name, 'dry');
  assert.is(store.pods.record('default', 'dry'), undefined);
  const wrong = await call('POST', `${base}?dryRun=Some`, pod('dry'));
  assert.is(wrong.code, 422);
  assert.is(wrong.body.details.causes[0].field, 'dryRun');
});

t('PUT changes an image; other spec fields are immutable (422); a stale resourceVersion is 409', async () => {
  const { call } = setup();
  const created = (await call('POST', base, pod('web'))).body as Pod;
  const next = structuredClone(created);
  next.spec.containers[0]!.image = 'busybox:1.37';
  const ok = await call('PUT', `${base}/web`, next);
  assert.is(ok.code, 200, JSON.stringify(ok.body));
  assert.is(ok.body.spec.containers[0].image, 'busybox:1.37');
  assert.is(ok.body.metadata.generation, 2);
  const stale = await call('PUT', `${base}/web`, next);
  assert.is(stale.code, 409);
  assert.match(stale.body.message, /the object has been modified/);
  const fixed = structuredClone(ok.body) as Pod;
  fixed.spec.restartPolicy = 'Never';
  const forbidden = await call('PUT', `${base}/web`, fixed);
  assert.is(forbidden.code, 422);
  assert.is(forbidden.body.details.causes[0].field, 'spec');
  const missing = await call('PUT', `${base}/nope`, pod('nope'));
  assert.is(missing.code, 404);
  const renamed = await call('PUT', `${base}/web`, {
    ...ok.body,
    metadata: { ...ok.body.metadata, name: 'other' },
  });
  assert.is(renamed.code, 400);
});

t('PATCH: strategic merge, merge, JSON patch; unknown types are 415', async () => {
  const { call } = setup();
  await call('POST', base, pod('web'));
  const smp = await call(
    'PATCH',
    `${base}/web`,
    { metadata: { labels: { tier: 'edge' } } },
    {
      'content-type': 'application/strategic-merge-patch+json',
    },
  );
  assert.is(smp.code, 200);
  assert.equal(smp.body.metadata.labels, { app: 'web', tier: 'edge' });
  const merge = await call(
    'PATCH',
    `${base}/web`,
    { metadata: { annotations: { note: 'x' } } },
    {
      'content-type': 'application/merge-patch+json',
    },
  );
  assert.equal(merge.body.metadata.annotations, { note: 'x' });
  const jp = await call(
    'PATCH',
    `${base}/web`,
    [
      { op: 'replace', path: '/spec/containers/0/image', value: 'busybox:1.37' },
      { op: 'remove', path: '/metadata/labels/tier' },
    ],
    { 'content-type': 'application/json-patch+json' },
  );
  assert.is(jp.code, 200, JSON.stringify(jp.body));
  assert.is(jp.body.spec.containers[0].image, 'busybox:1.37');
  assert.equal(jp.body.metadata.labels, { app: 'web' });
  const badOp = await call('PATCH', `${base}/web`, [{ op: 'remove', path: '/metadata/nope' }], {
    'content-type': 'application/json-patch+json',
  });
  assert.is(badOp.code, 422);
  const other = await call('PATCH', `${base}/web`, {}, { 'content-type': 'text/plain' });
  assert.is(other.code, 415);
  assert.is(other.body.reason, 'UnsupportedMediaType');
});

t(
  'server-side apply: creates, owns its fields, conflicts with another manager, force takes over',
  async () => {
    const { call } = setup();
    const yaml = (image: string, labels = 'app: web') =>
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels: {${labels}}\nspec:\n  containers:\n  - name: main\n    image: ${image}\n`;
    const apply = { 'content-type': 'application/apply-patch+yaml' };
    const first = await call(
      'PATCH',
      `${base}/web?fieldManager=kubectl`,
      yaml('busybox:1.36', 'app: web, extra: x'),
      apply,
    );
    assert.is(first.code, 201, JSON.stringify(first.body));
    const mf = first.body.metadata.managedFields as {
      manager: string;
      operation: string;
      fieldsV1: Record<string, Record<string, Record<string, Record<string, unknown>>>>;
    }[];
    assert.is(mf.find((e) => e.manager === 'kubectl')!.operation, 'Apply');
    assert.ok(mf[0]!.fieldsV1['f:spec']?.['f:containers']?.['k:{"name":"main"}']?.['f:image']);
    // Dropping a label from the configuration removes it; changing the image is this manager's right.
    const second = await call('PATCH', `${base}/web?fieldManager=kubectl`, yaml('busybox:1.37'), apply);
    assert.is(second.code, 200, JSON.stringify(second.body));
    assert.equal(second.body.metadata.labels, { app: 'web' });
    assert.is(second.body.spec.containers[0].image, 'busybox:1.37');
    const conflict = await call('PATCH', `${base}/web?fieldManager=other`, yaml('busybox:1.38'), apply);
    assert.is(conflict.code, 409);
    assert.is(conflict.body.details.causes[0].reason, 'FieldManagerConflict');
    assert.is(conflict.body.details.causes[0].field, '.spec.containers[name="main"].image');
    const forced = await call(
      'PATCH',
      `${base}/web?fieldManager=other&force=true`,
      yaml('busybox:1.38'),
      apply,
    );
    assert.is(forced.code, 200);
    assert.is(forced.body.spec.containers[0].image, 'busybox:1.38');
    // The taker's Apply entry is kept, owning the image it took over (found by the differential suite).
    const taker = (
      forced.body.metadata.managedFields as {
        manager: string;
        operation: string;
        fieldsV1: Record<string, Record<string, Record<string, Record<string, unknown>>>>;
      }[]
    ).find((e) => e.manager === 'other');
    assert.is(taker?.operation, 'Apply');
    assert.ok(taker?.fieldsV1['f:spec']?.['f:containers']?.['k:{"name":"main"}']?.['f:image']);
    const noManager = await call('PATCH', `${base}/web`, yaml('busybox:1.38'), apply);
    assert.is(noManager.code, 422);
  },
);

t('DELETE removes at once without a runtime; preconditions; 404 after', async () => {
  const { call, store } = setup();
  const created = (await call('POST', base, pod('web'))).body as Pod;
  const pre = await call('DELETE', `${base}/web`, { preconditions: { uid: 'nope' } });
  assert.is(pre.code, 409);
  const bad = await call('DELETE', `${base}/web?propagationPolicy=Sometimes`);
  assert.is(bad.code, 400);
  const dry = await call('DELETE', `${base}/web?dryRun=All`);
  assert.is(dry.code, 200);
  assert.ok(store.pods.record('default', 'web'));
  const del = await call('DELETE', `${base}/web`, {
    propagationPolicy: 'Background',
    preconditions: { uid: created.metadata.uid },
  });
  assert.is(del.code, 200, JSON.stringify(del.body));
  assert.is(del.body.metadata.name, 'web');
  assert.is(store.pods.record('default', 'web'), undefined);
  assert.is((await call('DELETE', `${base}/web`)).code, 404);
});

t('DELETE with a runtime marks the pod terminating with the grace period given', async () => {
  const { app, store } = testApp({ cri: {} as never });
  await app.request(base, { method: 'POST', headers: json, body: JSON.stringify(pod('web')) });
  const res = await app.request(`${base}/web?gracePeriodSeconds=5`, { method: 'DELETE' });
  assert.is(res.status, 200);
  const body = (await res.json()) as Pod;
  assert.ok(body.metadata.deletionTimestamp);
  assert.is(body.metadata.deletionGracePeriodSeconds, 5);
  assert.ok(store.pods.record('default', 'web'), 'left for the lifecycle manager');
  const now = await app.request(`${base}/web?gracePeriodSeconds=0`, { method: 'DELETE' });
  assert.is(now.status, 200);
  assert.is(store.pods.record('default', 'web'), undefined, 'grace 0 removes at once');
});

t('deletecollection deletes what the selectors match', async () => {
  const { call, store } = setup();
  await call('POST', base, pod('a'));
  await call('POST', base, { ...pod('b'), metadata: { name: 'b', labels: { app: 'b', tier: 'x' } } });
  await call('POST', base, { ...pod('c'), metadata: { name: 'c', labels: { tier: 'x' } } });
  const r = await call('DELETE', `${base}?labelSelector=tier%3Dx`);
  assert.is(r.code, 200);
  assert.is(r.body.kind, 'PodList');
  assert.equal(
    r.body.items.map((p: Pod) => p.metadata.name),
    ['b', 'c'],
  );
  assert.ok(store.pods.record('default', 'a'));
  assert.is(store.pods.record('default', 'b'), undefined);
});

t('manifest pods answer 409 naming their file, cloud pods 403; nothing changes', async () => {
  const { call, store } = setup();
  const spec = { containers: [{ name: 'main', image: 'busybox:1.36' }], nodeName: 'edge-1' };
  store.pods.put(
    { metadata: { name: 'static', namespace: 'default' }, spec },
    'manifest',
    '/etc/outpost/static.yaml',
  );
  store.pods.put({ metadata: { name: 'cloudy', namespace: 'default' }, spec }, 'cloud');
  const del = await call('DELETE', `${base}/static`);
  assert.is(del.code, 409);
  assert.match(del.body.message, /\/etc\/outpost\/static\.yaml/);
  const patch = await call(
    'PATCH',
    `${base}/static`,
    { metadata: { labels: { a: 'b' } } },
    {
      'content-type': 'application/merge-patch+json',
    },
  );
  assert.is(patch.code, 409);
  const cloud = await call('DELETE', `${base}/cloudy`);
  assert.is(cloud.code, 403);
  assert.match(cloud.body.message, /source=cloud/);
  const all = await call('DELETE', base);
  assert.ok(all.code === 403 || all.code === 409, 'deletecollection is all or nothing');
  assert.ok(store.pods.record('default', 'static'));
  assert.ok(store.pods.record('default', 'cloudy'));
});

t('pods/status get and patch; eviction deletes', async () => {
  const { call, store } = setup();
  await call('POST', base, pod('web'));
  const get = await call('GET', `${base}/web/status`);
  assert.is(get.code, 200);
  assert.is(get.body.kind, 'Pod');
  const patched = await call(
    'PATCH',
    `${base}/web/status`,
    { status: { conditions: [{ type: 'example.com/Gate', status: 'True' }] } },
    { 'content-type': 'application/strategic-merge-patch+json' },
  );
  assert.is(patched.code, 200, JSON.stringify(patched.body));
  assert.ok(patched.body.status.conditions.some((c: { type: string }) => c.type === 'example.com/Gate'));
  const ev = await call('POST', `${base}/web/eviction`, {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name: 'web', namespace: 'default' },
  });
  assert.is(ev.code, 201);
  assert.is(ev.body.status, 'Success');
  assert.is(store.pods.record('default', 'web'), undefined);
});

t.run();
