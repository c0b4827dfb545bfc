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
