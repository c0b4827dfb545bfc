// Every verb that discovery lists for every resource answers: no 404 for a missing route and no
// 405. A 404 counts only when it is about the object asked for (details.name), as for a missing pod.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import { createApp } from '#lib/app.ts';
import type { ApiResource } from '#lib/http/discovery.ts';
import { silentLogger } from '#lib/log.ts';
import { createStore } from '#lib/store/index.ts';

const store = createStore(openMetabase(':memory:'), { host: 'edge-1' });
const app = createApp({
  store,
  log: silentLogger,
  now: () => Date.now(),
  nodeName: 'edge-1',
  shutdown: new AbortController().signal,
  health: () => [],
});

const json = async (path: string) => (await (await app.request(path)).json()) as Record<string, unknown>;

/** Every group version discovery announces, with its resources. */
async function discovered(): Promise<{ prefix: string; resources: ApiResource[] }[]> {
  const out = [];
  for (const v of (await json('/api')).versions as string[]) {
    out.push({ prefix: `/api/${v}`, resources: (await json(`/api/${v}`)).resources as ApiResource[] });
  }
  for (const g of (await json('/apis')).groups as { versions: { groupVersion: string }[] }[]) {
    for (const { groupVersion } of g.versions) {
      const prefix = `/apis/${groupVersion}`;
      out.push({ prefix, resources: (await json(prefix)).resources as ApiResource[] });
    }
  }
  return out;
}

const NAME = 'probe-target';

/** The request that exercises one verb of one resource (writes are dry runs). */
function requestFor(prefix: string, res: ApiResource, verb: string): [string, RequestInit] | undefined {
  const [resource, sub] = res.name.split('/');
  const collection = res.namespaced ? `${prefix}/namespaces/default/${resource}` : `${prefix}/${resource}`;
  const item = `${collection}/${sub === undefined && res.namespaced === false && resource === 'nodes' ? 'edge-1' : NAME}`;
  const target = sub ? `${item}/${sub}` : item;
  const body = (method: string, type = 'application/json'): RequestInit => ({
    method,
    headers: { 'content-type': type },
    body: '{}',
  });
  switch (verb) {
    case 'list':
      return [collection, {}];
    case 'watch':
      return [`${collection}?watch=true&timeoutSeconds=1`, {}];
    case 'get':
      return [target, {}];
    case 'create':
      return [`${sub ? target : collection}?dryRun=All`, body('POST')];
    case 'update':
      return [`${target}?dryRun=All`, body('PUT')];
    case 'patch':
      return [`${target}?dryRun=All`, body('PATCH', 'application/merge-patch+json')];
    case 'delete':
      return [`${target}?dryRun=All`, { method: 'DELETE' }];
    case 'deletecollection':
      return [`${collection}?dryRun=All`, { method: 'DELETE' }];
    default:
      return undefined;
  }
}

test('discovery lists resources in the core group, devices and metrics', async () => {
  const gvs = (await discovered()).map((g) => g.prefix);
  assert.ok(gvs.includes('/api/v1'));
  assert.ok(gvs.includes('/apis/devices.kubeedge.io/v1beta1'));
  assert.ok(gvs.includes('/apis/metrics.k8s.io/v1beta1'));
});

test('every listed verb of every resource is served (not 405, not a 404 for the route)', async () => {
  const failures: string[] = [];
  let checked = 0;
  for (const { prefix, resources } of await discovered()) {
    for (const res of resources) {
      for (const verb of res.verbs) {
        const req = requestFor(prefix, res, verb);
        assert.ok(req, `a request for verb ${verb}`);
        const [path, init] = req;
        const answer = await app.request(path, init);
        checked++;
        const text = await answer.text();
        const what = `${verb} ${res.name}: ${init.method ?? 'GET'} ${path} -> ${answer.status} ${text.slice(0, 200)}`;
        if (answer.status === 405) failures.push(what);
        if (answer.status === 404) {
          // A missing object is fine; a missing route is not.
          const status = JSON.parse(text) as { details?: { name?: string } };
          if (status.details?.name !== NAME) failures.push(what);
        }
      }
    }
  }
  assert.ok(checked > 40, `checked ${checked} verbs`);
  assert.equal(failures, []);
});

test('an event is served by name, as discovery promises', async () => {
  const event = store.events.record(
    { kind: 'Pod', namespace: 'default', name: 'web', uid: 'u-1' },
    'Normal',
    'Started',
    'Started container main',
  );
  const name = event.metadata.name!;
  const one = await app.request(`/api/v1/namespaces/default/events/${name}`);
  assert.is(one.status, 200);
  const got = (await one.json()) as { metadata: { name: string }; reason: string };
  assert.is(got.metadata.name, name);
  assert.is(got.reason, 'Started');
  const table = await app.request(`/api/v1/namespaces/default/events/${name}`, {
    headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
  });
  assert.is(((await table.json()) as { kind: string }).kind, 'Table');
  const missing = await app.request('/api/v1/namespaces/default/events/nope');
  assert.is(missing.status, 404);
  assert.is(((await missing.json()) as { message: string }).message, 'events "nope" not found');
  const elsewhere = await app.request(`/api/v1/namespaces/other/events/${name}`);
  assert.is(elsewhere.status, 404);
});

test.run();
