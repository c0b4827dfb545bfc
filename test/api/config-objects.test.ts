// ConfigMaps, Secrets and the Node through the API: app.request for the rules, the real kubectl
// (which sends ConfigMaps and Secrets as protobuf) for the contract.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { kubectl, startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { testApp } from '../helpers/app.ts';

const json = { 'content-type': 'application/json' };

const u = suite('configmaps and secrets (app)');

u(
  'create, list, get, patch, replace, delete a ConfigMap; 422 for a bad key; watch sees the changes',
  async () => {
    const { app } = testApp();
    const base = '/api/v1/namespaces/default/configmaps';
    const watch = await app.request(`${base}?watch=true&resourceVersion=0`);
    const created = await app.request(base, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ metadata: { name: 'cfg' }, data: { a: '1' } }),
    });
    assert.is(created.status, 201);
    const cm = (await created.json()) as { metadata: { uid: string; resourceVersion: string } };
    assert.ok(cm.metadata.uid);
    const list = (await (await app.request(base)).json()) as { kind: string; items: unknown[] };
    assert.is(list.kind, 'ConfigMapList');
    assert.is(list.items.length, 1);
    const patched = await app.request(`${base}/cfg`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ data: { b: '2' } }),
    });
    assert.equal(((await patched.json()) as { data: unknown }).data, { a: '1', b: '2' });
    const stale = await app.request(`${base}/cfg`, {
      method: 'PUT',
      headers: json,
      body: JSON.stringify({
        metadata: { name: 'cfg', resourceVersion: cm.metadata.resourceVersion },
        data: {},
      }),
    });
    assert.is(stale.status, 409);
    const bad = await app.request(base, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ metadata: { name: 'bad' }, data: { 'no/slash': 'x' } }),
    });
    assert.is(bad.status, 422);
    const del = await app.request(`${base}/cfg`, { method: 'DELETE' });
    assert.is(del.status, 200);
    const gone = (await del.json()) as {
      kind: string;
      status: string;
      details: { name: string; kind: string };
    };
    assert.equal(
      [gone.kind, gone.status, gone.details.name, gone.details.kind],
      ['Status', 'Success', 'cfg', 'configmaps'],
    );
    assert.is((await app.request(`${base}/cfg`)).status, 404);
    const reader = watch.body!.getReader();
    const seen: string[] = [];
    let text = '';
    while (seen.length < 3) {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
      const lines = text.split('\n');
      text = lines.pop()!;
      for (const l of lines) seen.push((JSON.parse(l) as { type: string }).type);
    }
    await reader.cancel();
    assert.equal(seen, ['ADDED', 'MODIFIED', 'DELETED']);
  },
);

u('Secrets: stringData becomes base64 data, type defaults to Opaque, immutable holds', async () => {
  const { app } = testApp();
  const base = '/api/v1/namespaces/default/secrets';
  const r = await app.request(base, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ metadata: { name: 's' }, stringData: { password: 'hunter2' }, immutable: true }),
  });
  assert.is(r.status, 201);
  const s = (await r.json()) as { type: string; data: Record<string, string>; stringData?: unknown };
  assert.is(s.type, 'Opaque');
  assert.is(s.data.password, Buffer.from('hunter2').toString('base64'));
  assert.is(s.stringData, undefined);
  const change = await app.request(`${base}/s`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ data: { password: 'eA==' } }),
  });
  assert.is(change.status, 422);
  const notBase64 = await app.request(base, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ metadata: { name: 't' }, data: { k: 'not base64!' } }),
  });
  assert.is(notBase64.status, 422);
});

u('Secrets of the built-in types need their keys (422 FieldValueRequired, as ValidateSecret)', async () => {
  const { app } = testApp();
  const base = '/api/v1/namespaces/default/secrets';
  const post = async (name: string, type: string, data: Record<string, string>) => {
    const r = await app.request(base, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ metadata: { name }, type, data }),
    });
    const body = (await r.json()) as { details?: { causes?: { field: string; reason: string }[] } };
    return { code: r.status, fields: body.details?.causes?.map((c) => `${c.field} ${c.reason}`) };
  };
  assert.equal(await post('tls', 'kubernetes.io/tls', { 'tls.crt': 'eA==' }), {
    code: 422,
    fields: ['data[tls.key] FieldValueRequired'],
  });
  assert.is((await post('tls-ok', 'kubernetes.io/tls', { 'tls.crt': 'eA==', 'tls.key': 'eA==' })).code, 201);
  const notJson = await post('docker', 'kubernetes.io/dockerconfigjson', { '.dockerconfigjson': 'eA==' });
  assert.equal(notJson.fields, ['data[.dockerconfigjson] FieldValueInvalid']);
  assert.equal((await post('ssh', 'kubernetes.io/ssh-auth', {})).fields, [
    'data[ssh-privatekey] FieldValueRequired',
  ]);
  assert.is((await post('basic', 'kubernetes.io/basic-auth', { username: 'eA==' })).code, 201);
});

u.run();

const k = suite('kubectl: cm, secrets, nodes');
let agent: TestAgent;
k.before(async () => {
  agent = await startTestAgent();
});
k.after(async () => {
  await agent.stop();
});

const ok = (r: { code: number | null; stdout: string; stderr: string }) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r.stdout;
};

k('kubectl create configmap/secret (protobuf), get cm,secrets,nodes, edit, delete', async () => {
  ok(await kubectl(agent.url, ['create', 'configmap', 'cfg', '--from-literal=a=1', '--from-literal=b=2']));
  ok(await kubectl(agent.url, ['create', 'secret', 'generic', 'sec', '--from-literal=password=hunter2']));
  const out = ok(await kubectl(agent.url, ['get', 'cm,secrets,nodes']));
  assert.match(out, /configmap\/cfg\s+2\s+/);
  assert.match(out, /secret\/sec\s+Opaque\s+1\s+/);
  assert.match(out, /node\/edge-1\s+Ready\s+edge\s+/);
  const pw = ok(await kubectl(agent.url, ['get', 'secret', 'sec', '-o', 'jsonpath={.data.password}']));
  assert.is(Buffer.from(pw, 'base64').toString(), 'hunter2');
  ok(await kubectl(agent.url, ['label', 'cm', 'cfg', 'tier=edge']));
  const labels = ok(await kubectl(agent.url, ['get', 'cm', 'cfg', '-o', 'jsonpath={.metadata.labels.tier}']));
  assert.is(labels, 'edge');
  ok(await kubectl(agent.url, ['delete', 'cm', 'cfg']));
  ok(await kubectl(agent.url, ['delete', 'secret', 'sec']));
  assert.match(ok(await kubectl(agent.url, ['get', 'cm'])), /^$/);
});

k('kubectl get nodes -o wide and describe node show the host', async () => {
  const wide = ok(await kubectl(agent.url, ['get', 'nodes', '-o', 'wide']));
  assert.match(
    wide,
    /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\s+INTERNAL-IP\s+EXTERNAL-IP\s+OS-IMAGE\s+KERNEL-VERSION\s+CONTAINER-RUNTIME\n/,
  );
  const d = ok(await kubectl(agent.url, ['describe', 'node', 'edge-1']));
  for (const want of [
    'MemoryPressure',
    'DiskPressure',
    'PIDPressure',
    'Capacity:',
    'Allocatable:',
    'Non-terminated Pods:',
    'Allocated resources:',
  ])
    assert.ok(d.includes(want), want);
  const other = await kubectl(agent.url, ['get', 'node', 'elsewhere']);
  assert.match(other.stderr, /nodes "elsewhere" not found/);
});

k.run();
