// `kubectl explain` with the real kubectl (every minor the machine's dispatcher offers): it reads
// Outpost's OpenAPI v3 documents, built on the first request.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { run, startTestAgent, type TestAgent } from '../helpers/agent.ts';

const dir = mkdtempSync(join(tmpdir(), 'outpost-kubectl-explain-'));
let agent: TestAgent;

const t = suite('kubectl explain');
t.before(async () => {
  agent = await startTestAgent();
});
t.after(async () => {
  await agent.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** What each explained path must print: its kind, and fields or a description of its own. */
const cases: [string, RegExp[]][] = [
  ['pod', [/KIND:\s+Pod/, /VERSION:\s+v1/, /spec\s+<PodSpec>/, /status\s+<PodStatus>/]],
  [
    'pod.spec.containers',
    [
      /FIELD: containers <\[\]Container>/,
      /image\s+<string>/,
      /env\s+<\[\]EnvVar>/,
      /name\s+<string> -required-/,
    ],
  ],
  ['pod.spec.containers.livenessProbe.httpGet.port', [/FIELD: port <IntOrString>/]],
  ['configmap', [/KIND:\s+ConfigMap/, /data\s+<map\[string\]string>/, /immutable\s+<boolean>/]],
  ['secret', [/KIND:\s+Secret/, /stringData\s+<map\[string\]string>/, /type\s+<string>/]],
  ['node.status', [/KIND:\s+Node/, /conditions\s+<\[\]Object>/, /nodeInfo\s+<Object>/]],
  ['event', [/KIND:\s+Event/, /involvedObject\s+<ObjectReference>/, /reason\s+<string>/]],
  ['device', [/GROUP:\s+devices\.kubeedge\.io/, /KIND:\s+Device/, /spec\s+<Object>/]],
  ['device.spec.properties', [/desired\s+<Object>/, /reportCycle\s+<integer>/]],
  ['devicemodel.spec.properties', [/KIND:\s+DeviceModel/, /accessMode\s+<string>/]],
];

const sdk = '/usr/lib/google-cloud-sdk/bin';
const minors = [27, 28, 29, 30, 31, 32, 33].filter((m) => existsSync(join(sdk, `kubectl.1.${m}`)));

for (const minor of minors) {
  t(`kubectl 1.${minor} explain: pods, configmaps, secrets, nodes, events, devices`, async () => {
    const home = mkdtempSync(join(dir, `home-${minor}-`));
    for (const [path, expected] of cases) {
      const r = await run(
        join(sdk, `kubectl.1.${minor}`),
        [`--server=${agent.url}`, `--cache-dir=${join(home, 'cache')}`, 'explain', path],
        { env: { ...process.env, HOME: home, KUBECONFIG: join(home, 'none') } },
      );
      assert.is(r.code, 0, `explain ${path}: ${r.stdout}\n${r.stderr}`);
      for (const re of expected) assert.match(r.stdout, re, `explain ${path}`);
    }
  });
}

t('the kubectl on PATH: explain --recursive walks nested references', async () => {
  const home = mkdtempSync(join(dir, 'home-path-'));
  const r = await run(
    'kubectl',
    [`--server=${agent.url}`, `--cache-dir=${join(home, 'cache')}`, 'explain', 'pod.spec', '--recursive'],
    { env: { ...process.env, HOME: home, KUBECONFIG: join(home, 'none') } },
  );
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /configMapKeyRef\s+<Object>/);
  assert.match(r.stdout, /volumeMounts\s+<\[\]VolumeMount>/);
  const missing = await run(
    'kubectl',
    [`--server=${agent.url}`, `--cache-dir=${join(home, 'cache')}`, 'explain', 'pod.spec.nosuchfield'],
    { env: { ...process.env, HOME: home, KUBECONFIG: join(home, 'none') } },
  );
  assert.is(missing.code, 1);
  assert.match(missing.stderr, /nosuchfield/);
});

t.run();
