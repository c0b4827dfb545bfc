// The real kubectl on this machine against a real Outpost socket: the compatibility contract.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { kubectl, outpost, startTestAgent, type TestAgent } from '../helpers/agent.ts';

const dir = mkdtempSync(join(tmpdir(), 'outpost-kubectl-'));
let agent: TestAgent;

const pod = (name: string, ns: string, labels: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${ns}
  labels: {${labels}}
spec:
  containers:
    - name: main
      image: busybox:1.36
`;

const t = suite('kubectl');
t.before(async () => {
  writeFileSync(
    join(dir, 'pods.yaml'),
    [
      pod('web', 'default', 'app: web'),
      pod('db', 'default', 'app: db'),
      pod('reader', 'sensors', 'app: reader'),
    ].join('---\n'),
  );
  // A frozen clock keeps AGE identical between the kubectl and outpost runs compared below.
  const frozen = Date.now();
  agent = await startTestAgent({ manifests: dir, now: () => frozen });
});
t.after(async () => {
  await agent.stop();
  rmSync(dir, { recursive: true, force: true });
});

t('get pods -A prints every pod with its namespace', async () => {
  const r = await kubectl(agent.url, ['get', 'pods', '-A']);
  assert.is(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.match(lines[0]!, /^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
  assert.match(r.stdout, /default\s+db\s+0\/1\s+Pending\s+0\s+/);
  assert.match(r.stdout, /sensors\s+reader\s+0\/1\s+Pending\s+0\s+/);
  assert.is(lines.length, 4);
});

t('get po (short name) in one namespace, and -o wide', async () => {
  const r = await kubectl(agent.url, ['get', 'po', '-n', 'sensors', '-o', 'wide']);
  assert.is(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES\n/,
  );
  assert.match(r.stdout, /reader\s+0\/1\s+Pending\s+0\s+\S+\s+<none>\s+edge-1\s+<none>\s+<none>/);
});

t('get pod -o yaml is the stored pod', async () => {
  const r = await kubectl(agent.url, ['get', 'pod', 'web', '-o', 'yaml']);
  assert.is(r.code, 0, r.stderr);
  const obj = parse(r.stdout);
  assert.is(obj.kind, 'Pod');
  assert.is(obj.metadata.name, 'web');
  assert.is(obj.spec.nodeName, 'edge-1');
  assert.equal(obj.metadata.labels, { app: 'web' });
});

t('label and field selectors are applied by the server', async () => {
  const byLabel = await kubectl(agent.url, ['get', 'pods', '-l', 'app in (db,reader)', '-A', '-o', 'name']);
  assert.is(byLabel.stdout, 'pod/db\npod/reader\n');
  const byField = await kubectl(agent.url, [
    'get',
    'pods',
    '-A',
    '--field-selector',
    'metadata.namespace!=default',
    '-o',
    'name',
  ]);
  assert.is(byField.stdout, 'pod/reader\n');
  const bad = await kubectl(agent.url, ['get', 'pods', '--field-selector', 'spec.bogus=1']);
  assert.is(bad.code, 1);
  assert.match(bad.stderr, 'Error from server (BadRequest)');
  assert.match(bad.stderr, 'field label not supported: spec.bogus');
});

t('get pod missing prints the exact NotFound line', async () => {
  const r = await kubectl(agent.url, ['get', 'pod', 'missing']);
  assert.is(r.code, 1);
  assert.is(r.stderr.trim(), 'Error from server (NotFound): pods "missing" not found');
});

t("an empty namespace prints kubectl's empty message", async () => {
  const r = await kubectl(agent.url, ['get', 'pods', '-n', 'nothing-here']);
  assert.is(r.code, 0);
  assert.is(r.stderr.trim(), 'No resources found in nothing-here namespace.');
});

t('get pods -w sees a manifest change', async () => {
  // Until late's whole line is out (a first chunk may end inside it); generous for a loaded machine.
  const watching = kubectl(agent.url, ['get', 'pods', '-w', '-n', 'default'], {
    untilStdout: /\nlate\s.*\n/,
    timeoutMs: 90_000,
  });
  await new Promise((r) => setTimeout(r, 1500));
  writeFileSync(join(dir, 'late.yaml'), pod('late', 'default', 'app: late'));
  const r = await watching;
  assert.match(r.stdout, /^NAME\s+READY\s+STATUS/, r.stdout + r.stderr);
  assert.match(r.stdout, /\nlate\s+0\/1\s+Pending\s+0\s+/, r.stdout + r.stderr);
});

t('outpost get prints what kubectl prints', async () => {
  for (const args of [
    ['get', 'pods', '-A'],
    ['get', 'po', '-n', 'sensors', '-o', 'wide'],
    ['get', 'pods', '-l', 'app!=web', '-o', 'name'],
    ['get', 'pod', 'web', '-o', 'jsonpath={.metadata.name} {.spec.nodeName}'],
    ['get', 'pods', '-o', 'custom-columns=NAME:.metadata.name,NODE:.spec.nodeName'],
  ]) {
    const [ours, theirs] = await Promise.all([outpost([...args, '-s', agent.url]), kubectl(agent.url, args)]);
    assert.is(ours.stdout, theirs.stdout, args.join(' '));
    assert.is(ours.code, theirs.code, args.join(' '));
  }
  const yamlOurs = await outpost(['get', 'pod', 'web', '-o', 'yaml', '-s', agent.url]);
  const yamlTheirs = await kubectl(agent.url, ['get', 'pod', 'web', '-o', 'yaml']);
  assert.equal(parse(yamlOurs.stdout), parse(yamlTheirs.stdout));
  const missing = await outpost(['ctl', 'get', 'pod', 'missing', '-s', agent.url]);
  assert.is(missing.code, 1);
  assert.is(missing.stderr.trim(), 'Error from server (NotFound): pods "missing" not found');
});

t('outpost get -w sees a manifest change', async () => {
  const watching = outpost(['get', 'pods', '-w', '-s', agent.url], {
    untilStdout: /\nlater\s.*\n/,
    timeoutMs: 90_000,
  });
  await new Promise((r) => setTimeout(r, 1500));
  writeFileSync(join(dir, 'later.yaml'), pod('later', 'default', 'app: later'));
  const r = await watching;
  assert.match(r.stdout, /\nlater\s+0\/1\s+Pending\s+0\s+/, r.stdout + r.stderr);
});

t.run();
