// The real kubectl writing through Outpost's API (no runtime: deletes take effect at once):
// run, apply (client- and server-side), label, annotate, replace, edit, delete, and the same with
// every other kubectl minor the machine's dispatcher offers.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { kubectl, run, startTestAgent, type TestAgent } from '../helpers/agent.ts';

const dir = mkdtempSync(join(tmpdir(), 'outpost-kubectl-writes-'));
let agent: TestAgent;

const manifest = (name: string, image: string, labels = 'app: web') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels: {${labels}}
spec:
  containers:
    - name: main
      image: ${image}
`;

const t = suite('kubectl writes');
t.before(async () => {
  agent = await startTestAgent();
});
t.after(async () => {
  await agent.stop();
  rmSync(dir, { recursive: true, force: true });
});

const ok = (r: { code: number | null; stderr: string; stdout: string }) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r.stdout;
};
const getPod = async (name: string) =>
  parse(ok(await kubectl(agent.url, ['get', 'pod', name, '-o', 'yaml'])));

t('run creates a pod that get lists; delete removes it', async () => {
  assert.match(
    ok(await kubectl(agent.url, ['run', 'r1', '--image=busybox:1.36', '--', 'sleep', '60'])),
    /pod\/r1 created/,
  );
  const pod = await getPod('r1');
  assert.equal(pod.spec.containers[0].args, ['sleep', '60']);
  assert.is(agent.store.pods.record('default', 'r1')!.source, 'api');
  assert.match(ok(await kubectl(agent.url, ['delete', 'pod', 'r1'])), /pod "r1" deleted/);
  const gone = await kubectl(agent.url, ['get', 'pod', 'r1']);
  assert.is(gone.code, 1);
  assert.match(gone.stderr, /pods "r1" not found/);
});

t('apply -f creates then configures; label, annotate, replace and edit change it', async () => {
  const file = join(dir, 'web.yaml');
  writeFileSync(file, manifest('web', 'busybox:1.36'));
  assert.match(ok(await kubectl(agent.url, ['apply', '-f', file])), /pod\/web created/);
  writeFileSync(file, manifest('web', 'busybox:1.37'));
  assert.match(ok(await kubectl(agent.url, ['apply', '-f', file])), /pod\/web configured/);
  assert.is((await getPod('web')).spec.containers[0].image, 'busybox:1.37');
  ok(await kubectl(agent.url, ['label', 'pod', 'web', 'tier=edge']));
  ok(await kubectl(agent.url, ['annotate', 'pod', 'web', 'note=hello']));
  const labelled = await getPod('web');
  assert.equal(labelled.metadata.labels, { app: 'web', tier: 'edge' });
  assert.is(labelled.metadata.annotations.note, 'hello');
  const replaced = join(dir, 'replaced.yaml');
  writeFileSync(
    replaced,
    ok(await kubectl(agent.url, ['get', 'pod', 'web', '-o', 'yaml'])).replaceAll(
      'busybox:1.37',
      'busybox:1.38',
    ),
  );
  assert.match(ok(await kubectl(agent.url, ['replace', '-f', replaced])), /pod\/web replaced/);
  const editor = join(dir, 'editor.sh');
  writeFileSync(editor, `#!/bin/sh\nsed -i 's/busybox:1.38/busybox:1.39/' "$1"\n`, { mode: 0o755 });
  const edited = await kubectl(agent.url, ['edit', 'pod', 'web'], {
    env: { ...process.env, KUBE_EDITOR: editor },
  });
  assert.match(ok(edited), /pod\/web edited/, `${edited.stdout} ${edited.stderr}`);
  const pod = await getPod('web');
  assert.is(pod.spec.containers[0].image, 'busybox:1.39');
  assert.is(pod.metadata.generation, 4);
  // A change the API server forbids on a pod is refused with its words.
  const bad = join(dir, 'bad.yaml');
  writeFileSync(
    bad,
    ok(await kubectl(agent.url, ['get', 'pod', 'web', '-o', 'yaml'])).replace(
      'restartPolicy: Always',
      'restartPolicy: Never',
    ),
  );
  const refused = await kubectl(agent.url, ['replace', '-f', bad]);
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /is invalid: spec: Forbidden: pod updates may not change fields/);
  ok(await kubectl(agent.url, ['delete', '-f', file]));
});

t('apply --server-side: create, update, conflict with another manager, --force-conflicts', async () => {
  const file = join(dir, 'ssa.yaml');
  writeFileSync(file, manifest('ssa', 'busybox:1.36'));
  assert.match(
    ok(await kubectl(agent.url, ['apply', '--server-side', '-f', file])),
    /pod\/ssa serverside-applied/,
  );
  ok(await kubectl(agent.url, ['set', 'image', 'pod/ssa', 'main=busybox:1.37']));
  writeFileSync(file, manifest('ssa', 'busybox:1.38'));
  const conflict = await kubectl(agent.url, ['apply', '--server-side', '-f', file]);
  assert.is(conflict.code, 1);
  assert.match(
    conflict.stderr,
    /Apply failed with 1 conflict: conflict with "kubectl-set" using v1: \.spec\.containers\[name="main"\]\.image/,
  );
  ok(await kubectl(agent.url, ['apply', '--server-side', '--force-conflicts', '-f', file]));
  const pod = await getPod('ssa');
  assert.is(pod.spec.containers[0].image, 'busybox:1.38');
  ok(await kubectl(agent.url, ['delete', 'pod', 'ssa']));
});

t('apply --server-side on ConfigMaps and Secrets: create, update, conflict, --force-conflicts', async () => {
  const file = join(dir, 'cm.yaml');
  const cm = (value: string, extra = '') =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa-cm\ndata:\n  mode: ${value}\n${extra}`;
  writeFileSync(file, cm('fast', '  keep: "1"\n'));
  assert.match(
    ok(await kubectl(agent.url, ['apply', '--server-side', '-f', file])),
    /configmap\/ssa-cm serverside-applied/,
  );
  const created = parse(
    ok(await kubectl(agent.url, ['get', 'cm', 'ssa-cm', '-o', 'yaml', '--show-managed-fields'])),
  );
  assert.equal(created.data, { mode: 'fast', keep: '1' });
  assert.equal(
    created.metadata.managedFields.map((e: { manager: string; operation: string }) => [
      e.manager,
      e.operation,
    ]),
    [['kubectl', 'Apply']],
  );
  // A field the configuration no longer has goes away; another manager's change is a conflict.
  writeFileSync(file, cm('fast'));
  ok(await kubectl(agent.url, ['apply', '--server-side', '-f', file]));
  ok(await kubectl(agent.url, ['patch', 'cm', 'ssa-cm', '--type=merge', '-p', '{"data":{"mode":"slow"}}']));
  assert.equal(parse(ok(await kubectl(agent.url, ['get', 'cm', 'ssa-cm', '-o', 'yaml']))).data, {
    mode: 'slow',
  });
  writeFileSync(file, cm('eco'));
  const conflict = await kubectl(agent.url, ['apply', '--server-side', '-f', file]);
  assert.is(conflict.code, 1);
  assert.match(
    conflict.stderr,
    /Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: \.data\.mode/,
  );
  ok(await kubectl(agent.url, ['apply', '--server-side', '--force-conflicts', '-f', file]));
  assert.equal(parse(ok(await kubectl(agent.url, ['get', 'cm', 'ssa-cm', '-o', 'yaml']))).data, {
    mode: 'eco',
  });
  ok(await kubectl(agent.url, ['delete', 'cm', 'ssa-cm']));

  const secret = join(dir, 'secret.yaml');
  writeFileSync(
    secret,
    'apiVersion: v1\nkind: Secret\nmetadata:\n  name: ssa-secret\nstringData:\n  token: hunter2\n',
  );
  assert.match(
    ok(await kubectl(agent.url, ['apply', '--server-side', '--field-manager=deployer', '-f', secret])),
    /secret\/ssa-secret serverside-applied/,
  );
  const s = parse(ok(await kubectl(agent.url, ['get', 'secret', 'ssa-secret', '-o', 'yaml'])));
  assert.is(s.type, 'Opaque');
  assert.is(Buffer.from(s.data.token, 'base64').toString(), 'hunter2');
  assert.is(s.stringData, undefined);
  writeFileSync(
    secret,
    'apiVersion: v1\nkind: Secret\nmetadata:\n  name: ssa-secret\n  labels: {tier: edge}\nstringData:\n  token: hunter3\n',
  );
  ok(await kubectl(agent.url, ['apply', '--server-side', '--field-manager=deployer', '-f', secret]));
  const updated = parse(ok(await kubectl(agent.url, ['get', 'secret', 'ssa-secret', '-o', 'yaml'])));
  assert.is(Buffer.from(updated.data.token, 'base64').toString(), 'hunter3');
  assert.equal(updated.metadata.labels, { tier: 'edge' });
  ok(await kubectl(agent.url, ['delete', 'secret', 'ssa-secret']));
});

t('a manifest ConfigMap cannot be applied through the API: 409 names its file', async () => {
  agent.store.objects.put(
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'static-cm', namespace: 'default' },
      data: { a: '1' },
    },
    'manifest',
    '/etc/outpost/manifests/static-cm.yaml',
  );
  const file = join(dir, 'static-cm.yaml');
  writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: static-cm\ndata:\n  a: "2"\n');
  const r = await kubectl(agent.url, ['apply', '--server-side', '-f', file]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /static manifest \/etc\/outpost\/manifests\/static-cm\.yaml/);
  agent.store.objects.remove('ConfigMap', 'default', 'static-cm');
});

t('invalid pods are refused with the field at fault; dry runs change nothing', async () => {
  const file = join(dir, 'invalid.yaml');
  writeFileSync(file, manifest('Invalid_Name', 'busybox'));
  const r = await kubectl(agent.url, ['apply', '-f', file]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /metadata\.name: Invalid value: "Invalid_Name"/);
  const dry = await kubectl(agent.url, ['run', 'dry', '--image=busybox', '--dry-run=server']);
  assert.match(ok(dry), /pod\/dry created \(server dry run\)/);
  assert.is(agent.store.pods.record('default', 'dry'), undefined);
});

t('a manifest pod cannot be deleted through the API: 409 names its file', async () => {
  agent.store.pods.put(
    {
      metadata: { name: 'static', namespace: 'default' },
      spec: { nodeName: 'edge-1', containers: [{ name: 'm', image: 'busybox' }] },
    },
    'manifest',
    '/etc/outpost/manifests/static.yaml',
  );
  const r = await kubectl(agent.url, ['delete', 'pod', 'static']);
  assert.is(r.code, 1);
  assert.match(r.stderr, /static manifest \/etc\/outpost\/manifests\/static\.yaml/);
  agent.store.pods.remove('default', 'static');
});

// Every kubectl minor the dispatcher offers (1.27-1.33), where installed.
const sdk = '/usr/lib/google-cloud-sdk/bin';
for (const minor of [27, 28, 29, 30, 31, 32, 33]) {
  const bin = join(sdk, `kubectl.1.${minor}`);
  if (!existsSync(bin)) continue;
  t(`kubectl 1.${minor}: run, apply, apply --server-side, label, delete`, async () => {
    const home = mkdtempSync(join(dir, `home-${minor}-`));
    const k = (args: string[]) =>
      // As the admin: its kubeconfig, over https (kubectl sends a token over TLS only).
      run(bin, [`--kubeconfig=${agent.kubeconfig}`, `--cache-dir=${join(home, 'cache')}`, ...args], {
        env: { ...process.env, HOME: home, KUBECONFIG: join(home, 'none') },
      });
    const name = `v${minor}`;
    const file = join(home, 'pod.yaml');
    writeFileSync(file, manifest(name, 'busybox:1.36'));
    ok(await k(['apply', '-f', file]));
    writeFileSync(file, manifest(name, 'busybox:1.37'));
    assert.match(
      ok(await k(['apply', '--server-side', '--force-conflicts', '-f', file])),
      /serverside-applied/,
    );
    ok(await k(['label', 'pod', name, 'minor=x']));
    const cmFile = join(home, 'cm.yaml');
    writeFileSync(
      cmFile,
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}-cm\ndata:\n  a: "1"\n`,
    );
    assert.match(ok(await k(['apply', '--server-side', '-f', cmFile])), /serverside-applied/);
    ok(await k(['delete', 'cm', `${name}-cm`]));
    ok(await k(['run', `${name}-run`, '--image=busybox']));
    ok(await k(['delete', 'pod', name, `${name}-run`]));
    assert.is(agent.store.pods.record('default', name), undefined);
  });
}

t.run();
