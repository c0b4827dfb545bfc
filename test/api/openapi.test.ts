// What kubectl reads before edit/replace: without an OpenAPI document it refuses to send the change.
import protobuf from 'protobufjs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import { createApp } from '#lib/app.ts';
import { silentLogger } from '#lib/log.ts';
import { createStore } from '#lib/store/index.ts';

const app = createApp({
  store: createStore(openMetabase(':memory:'), { host: 'edge-1' }),
  log: silentLogger,
  now: () => 0,
  nodeName: 'edge-1',
  shutdown: new AbortController().signal,
  health: () => [],
});

test('v3: the device group version declares PATCH with fieldValidation (kubectl 1.29+ then validates on the server)', async () => {
  const root = (await (await app.request('/openapi/v3')).json()) as {
    paths: Record<string, { serverRelativeURL: string }>;
  };
  const url = root.paths['apis/devices.kubeedge.io/v1beta1']?.serverRelativeURL;
  assert.ok(url?.startsWith('/openapi/v3/apis/devices.kubeedge.io/v1beta1?hash='));
  const doc = (await (await app.request(url!)).json()) as {
    paths: Record<string, { patch?: { parameters: { name: string; in: string }[]; [k: string]: unknown } }>;
  };
  const patch = doc.paths['/apis/devices.kubeedge.io/v1beta1/namespaces/{namespace}/devices/{name}']?.patch;
  assert.ok(patch?.parameters.some((p) => p.name === 'fieldValidation' && p.in === 'query'));
  assert.equal(patch?.['x-kubernetes-group-version-kind'], {
    group: 'devices.kubeedge.io',
    version: 'v1beta1',
    kind: 'Device',
  });
});

interface Doc {
  paths: Record<
    string,
    Record<string, { parameters: { name: string }[]; requestBody?: unknown; [k: string]: unknown }>
  >;
  components: {
    schemas: Record<string, { 'x-kubernetes-group-version-kind'?: unknown[]; properties?: object }>;
  };
}

test('v3: the core group version has a schema per kind and declares fieldValidation on every PATCH', async () => {
  const root = (await (await app.request('/openapi/v3')).json()) as {
    paths: Record<string, { serverRelativeURL: string }>;
  };
  const url = root.paths['api/v1']?.serverRelativeURL;
  assert.match(url ?? '', /^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{128}$/);
  const res = await app.request(url!);
  assert.is(res.headers.get('cache-control'), 'no-cache, private');
  const doc = (await res.json()) as Doc;
  const kinds = Object.values(doc.components.schemas).flatMap(
    (s) => s['x-kubernetes-group-version-kind'] ?? [],
  );
  for (const kind of ['Pod', 'ConfigMap', 'Secret', 'Node', 'Event', 'PodList', 'ConfigMapList']) {
    assert.ok(
      kinds.some((k) => (k as { kind: string }).kind === kind),
      `${kind} has a schema`,
    );
  }
  const patches = Object.entries(doc.paths).flatMap(([path, ops]) =>
    ops.patch ? [[path, ops.patch] as const] : [],
  );
  assert.ok(patches.some(([p]) => p === '/api/v1/namespaces/{namespace}/pods/{name}'));
  assert.ok(patches.some(([p]) => p === '/api/v1/namespaces/{namespace}/configmaps/{name}'));
  for (const [path, op] of patches) {
    assert.ok(
      op.parameters.some((p) => p.name === 'fieldValidation'),
      path,
    );
    // A declared request body would make kubectl compute apply patches from these schemas.
    assert.is(op.requestBody, undefined, path);
  }
  // Every $ref resolves inside the document.
  const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map(
    (m) => m[1]!,
  );
  for (const name of refs) assert.ok(doc.components.schemas[name], `${name} is defined`);
  // Built once: the same bytes and hash on every request.
  const again = (await (await app.request('/openapi/v3')).json()) as typeof root;
  assert.is(again.paths['api/v1']?.serverRelativeURL, url);
});

test('v3: an unknown group version is 404 NotFound', async () => {
  const res = await app.request('/openapi/v3/apis/apps/v1');
  assert.is(res.status, 404);
});

test('v2 in gnostic protobuf for kubectl 1.27/1.28, JSON otherwise', async () => {
  const res = await app.request('/openapi/v2', {
    headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' },
  });
  // Go's mime parser rejects the '@' form kubectl asks with: answer kube-openapi's form.
  assert.is(res.headers.get('content-type'), 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
  const root = protobuf.parse(`syntax = "proto3";
    message Info { string title = 1; string version = 2; }
    message Document { string swagger = 1; Info info = 2; }`).root;
  const doc = root
    .lookupType('Document')
    .decode(new Uint8Array(await res.arrayBuffer()))
    .toJSON();
  assert.equal(doc, { swagger: '2.0', info: { title: 'Outpost', version: 'v1beta1' } });
  const json = (await (await app.request('/openapi/v2')).json()) as { swagger: string };
  assert.is(json.swagger, '2.0');
});

test.run();
