import { cpus } from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Container, KubeObject, Pod } from '#lib/kube/types.ts';
import {
  ContainerConfigError,
  type EnvContext,
  expand,
  expandCommand,
  formatMap,
  resolveEnv,
} from '#lib/pods/spec/env.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');

const objects: Record<string, KubeObject> = {
  'ConfigMap/ns1/cfg': {
    metadata: { name: 'cfg', namespace: 'ns1' },
    data: { LEVEL: 'debug', MODE: 'fast', 'bad key': 'x', '1NUM': 'y' },
    binaryData: { BLOB: b64('bin') },
  },
  'Secret/ns1/creds': {
    metadata: { name: 'creds', namespace: 'ns1' },
    data: { user: b64('admin'), pass: b64('s3cr=t\n') },
    stringData: { token: 'plain' },
  },
};

function context(overrides: Partial<EnvContext> = {}): EnvContext & { calls: string[] } {
  const calls: string[] = [];
  return {
    podIP: '10.0.0.5',
    hostIP: '192.168.1.10',
    nodeName: 'edge-1',
    allocatable: { cpu: '4', memory: '8Gi', 'ephemeral-storage': '100Gi' },
    lookup: (kind, ns, name) => {
      calls.push(`${kind}/${ns}/${name}`);
      return objects[`${kind}/${ns}/${name}`];
    },
    calls,
    ...overrides,
  };
}

function pod(container: Partial<Container>, extra: Partial<Pod['spec']> = {}): [Pod, Container] {
  const c = { name: 'app', image: 'busybox', ...container } as Container;
  const p: Pod = {
    metadata: {
      name: 'web',
      namespace: 'ns1',
      uid: 'uid-1',
      labels: { tier: 'front "end"', app: 'web' },
      annotations: { note: 'line1\nline2' },
    },
    spec: { containers: [c], serviceAccountName: 'robot', ...extra },
  };
  return [p, c];
}

const envOf = (c: Partial<Container>, ctx = context(), extra: Partial<Pod['spec']> = {}) => {
  const [p, cc] = pod(c, extra);
  return Object.fromEntries(resolveEnv(p, cc, ctx).envs.map((e) => [e.key, e.value]));
};

const configError = (message: string) => (e: unknown) =>
  e instanceof ContainerConfigError && e.message === message && e.reason === 'CreateContainerConfigError';

test('expand follows kubelet: references, $$ escapes, unknown and malformed refs kept', () => {
  const vars = (n: string) => ({ A: 'x', EMPTY: '' })[n];
  assert.is(expand('$(A)-y', vars), 'x-y');
  assert.is(expand('$$(A)', vars), '$(A)');
  assert.is(expand('$$$(A)', vars), '$x');
  assert.is(expand('$(MISSING)', vars), '$(MISSING)');
  assert.is(expand('[$(EMPTY)]', vars), '[]');
  assert.is(expand('cost: 5$', vars), 'cost: 5$');
  assert.is(expand('$(A', vars), '$(A');
  assert.is(expand('$A $(A)', vars), '$A x');
  assert.is(expand('$()', vars), '$()');
  assert.is(expand('$(A)$(A)', vars), 'xx');
});

test('env values expand against earlier variables only', () => {
  const env = envOf({
    env: [
      { name: 'A', value: 'x' },
      { name: 'B', value: '$(A)-y' },
      { name: 'C', value: '$$(A)' },
      { name: 'D', value: '$(LATER)' },
      { name: 'LATER', value: 'z' },
      { name: 'E', value: '' },
      { name: 'A', value: '$(A)2' },
    ],
  });
  assert.equal(env, { A: 'x2', B: 'x-y', C: '$(A)', D: '$(LATER)', LATER: 'z', E: '' });
});

test('fieldRef: metadata, spec and status fields', () => {
  const fields = [
    'metadata.name',
    'metadata.namespace',
    'metadata.uid',
    "metadata.labels['app']",
    "metadata.labels['nope']",
    "metadata.annotations['note']",
    'spec.nodeName',
    'spec.serviceAccountName',
    'status.podIP',
    'status.podIPs',
    'status.hostIP',
    'status.hostIPs',
  ];
  const env = envOf(
    { env: fields.map((f, i) => ({ name: `F${i}`, valueFrom: { fieldRef: { fieldPath: f } } })) },
    context({ podIPs: ['10.0.0.5', 'fd00::5'], hostIPs: ['192.168.1.10', 'fd00::1'] }),
  );
  assert.equal(Object.values(env), [
    'web',
    'ns1',
    'uid-1',
    'web',
    '',
    'line1\nline2',
    'edge-1',
    'robot',
    '10.0.0.5',
    '10.0.0.5,fd00::5',
    '192.168.1.10',
    '192.168.1.10,fd00::1',
  ]);
});

test('fieldRef: spec.nodeName comes from the pod when set, podIPs default to podIP', () => {
  const env = envOf(
    {
      env: [
        { name: 'N', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
        { name: 'IPS', valueFrom: { fieldRef: { fieldPath: 'status.podIPs', apiVersion: 'v1' } } },
      ],
    },
    context(),
    { nodeName: 'other' },
  );
  assert.equal(env, { N: 'other', IPS: '10.0.0.5' });
});

test('fieldRef: whole label maps render as sorted k="v" lines with Go quoting', () => {
  const env = envOf({ env: [{ name: 'L', valueFrom: { fieldRef: { fieldPath: 'metadata.labels' } } }] });
  assert.is(env.L, 'app="web"\ntier="front \\"end\\""');
  assert.is(formatMap({ b: 'tab\there', a: '\x01\\' }), 'a="\\x01\\\\"\nb="tab\\there"');
});

test('fieldRef: unsupported paths and API versions are config errors', () => {
  const bad = (fieldRef: object, message: string) =>
    assert.throws(() => envOf({ env: [{ name: 'X', valueFrom: { fieldRef } }] }), configError(message));
  bad({ fieldPath: 'spec.restartPolicy' }, 'unsupported fieldPath: spec.restartPolicy');
  bad({ fieldPath: 'metadata.name', apiVersion: 'v2' }, 'unsupported pod version: v2');
});

test('resourceFieldRef: limits and requests with divisors, rounded up', () => {
  const resources = { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '250m' } };
  const ref = (resource: string, divisor?: string) => ({
    valueFrom: { resourceFieldRef: { resource, ...(divisor ? { divisor } : {}) } },
  });
  const env = envOf({
    resources,
    env: [
      { name: 'CPU', ...ref('limits.cpu') },
      { name: 'CPU_M', ...ref('limits.cpu', '1m') },
      { name: 'REQ_M', ...ref('requests.cpu', '1m') },
      { name: 'MEM', ...ref('limits.memory') },
      { name: 'MEM_MI', ...ref('limits.memory', '1Mi') },
      { name: 'MEM_REQ', ...ref('requests.memory', '1Mi') },
      { name: 'ZERO_DIV', ...ref('limits.cpu', '0') },
    ],
  });
  assert.equal(env, {
    CPU: '1',
    CPU_M: '500',
    REQ_M: '250',
    MEM: '134217728',
    MEM_MI: '128',
    MEM_REQ: '128', // an unset request is the limit
    ZERO_DIV: '1',
  });
});

test('resourceFieldRef: unset limits default to node allocatable, unset requests to 0', () => {
  const env = envOf({
    env: [
      { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
      { name: 'MEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Gi' } } },
      { name: 'REQ', valueFrom: { resourceFieldRef: { resource: 'requests.cpu' } } },
      {
        name: 'DISK',
        valueFrom: { resourceFieldRef: { resource: 'limits.ephemeral-storage', divisor: '1Gi' } },
      },
    ],
  });
  assert.equal(env, { CPU: '4', MEM: '8', REQ: '0', DISK: '100' });
  const fromOs = envOf(
    { env: [{ name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } }] },
    context({ allocatable: {} }),
  );
  assert.is(fromOs.CPU, String(cpus().length));
});

test('resourceFieldRef: unknown resources and bad quantities are config errors', () => {
  assert.throws(
    () => envOf({ env: [{ name: 'X', valueFrom: { resourceFieldRef: { resource: 'limits.gpu' } } }] }),
    configError('unsupported container resource : limits.gpu'),
  );
  assert.throws(
    () =>
      envOf({
        resources: { limits: { cpu: 'lots' } },
        env: [{ name: 'X', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } }],
      }),
    (e: unknown) =>
      e instanceof ContainerConfigError && /^limits\.cpu: quantities must match/.test(e.message),
  );
});

test('configMapKeyRef and secretKeyRef read values; secrets are base64-decoded', () => {
  const ctx = context();
  const env = envOf(
    {
      env: [
        { name: 'LEVEL', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'LEVEL' } } },
        { name: 'USER', valueFrom: { secretKeyRef: { name: 'creds', key: 'user' } } },
        { name: 'PASS', valueFrom: { secretKeyRef: { name: 'creds', key: 'pass' } } },
        { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'creds', key: 'token' } } },
        { name: 'URL', value: 'http://$(USER)@host' },
      ],
    },
    ctx,
  );
  assert.equal(env, {
    LEVEL: 'debug',
    USER: 'admin',
    PASS: 's3cr=t\n',
    TOKEN: 'plain',
    URL: 'http://admin@host',
  });
  assert.equal(
    ctx.calls,
    ['ConfigMap/ns1/cfg', 'Secret/ns1/creds'],
    'looked up once each, in the pod namespace',
  );
});

test('optional refs to missing objects or keys leave the variable out', () => {
  const env = envOf({
    env: [
      { name: 'A', valueFrom: { configMapKeyRef: { name: 'nope', key: 'k', optional: true } } },
      { name: 'B', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'nope', optional: true } } },
      { name: 'C', valueFrom: { secretKeyRef: { name: 'nope', key: 'k', optional: true } } },
      { name: 'D', valueFrom: { secretKeyRef: { name: 'creds', key: 'nope', optional: true } } },
      { name: 'E', value: 'kept' },
    ],
  });
  assert.equal(env, { E: 'kept' });
});

test('required refs to missing objects or keys fail with kubelet messages', () => {
  const bad = (valueFrom: object, message: string) =>
    assert.throws(() => envOf({ env: [{ name: 'X', valueFrom }] }), configError(message));
  bad({ configMapKeyRef: { name: 'nope', key: 'k' } }, 'configmap "nope" not found');
  bad({ configMapKeyRef: { name: 'cfg', key: 'k' } }, "couldn't find key k in ConfigMap ns1/cfg");
  bad({ configMapKeyRef: { name: 'cfg', key: 'BLOB' } }, "couldn't find key BLOB in ConfigMap ns1/cfg");
  bad({ secretKeyRef: { name: 'nope', key: 'k' } }, 'secret "nope" not found');
  bad(
    { secretKeyRef: { name: 'creds', key: 'k', optional: false } },
    "couldn't find key k in Secret ns1/creds",
  );
});

test('envFrom imports data with a prefix, skips invalid names, and env wins', () => {
  const [p, c] = pod({
    envFrom: [
      { configMapRef: { name: 'cfg' }, prefix: 'CFG_' },
      { secretRef: { name: 'creds' } },
      { configMapRef: { name: 'cfg' } },
    ],
    env: [
      { name: 'MODE', value: 'slow' },
      { name: 'BOTH', value: '$(CFG_LEVEL)/$(user)' },
    ],
  });
  const { envs, warnings } = resolveEnv(p, c, context());
  assert.equal(Object.fromEntries(envs.map((e) => [e.key, e.value])), {
    CFG_LEVEL: 'debug',
    CFG_MODE: 'fast',
    CFG_1NUM: 'y',
    user: 'admin',
    pass: 's3cr=t\n',
    token: 'plain',
    LEVEL: 'debug',
    MODE: 'slow',
    BOTH: 'debug/admin',
  });
  assert.not.ok(
    envs.some((e) => e.key.includes('BLOB')),
    'binaryData is not used for the environment',
  );
  assert.equal(warnings, [
    'Keys [CFG_bad key] from the EnvFrom configMap ns1/cfg were skipped since they are considered invalid environment variable names.',
    'Keys [1NUM, bad key] from the EnvFrom configMap ns1/cfg were skipped since they are considered invalid environment variable names.',
  ]);
});

test('envFrom: optional missing sources are skipped, required ones fail', () => {
  assert.equal(
    envOf({
      envFrom: [
        { configMapRef: { name: 'nope', optional: true } },
        { secretRef: { name: 'gone', optional: true } },
      ],
    }),
    {},
  );
  assert.throws(
    () => envOf({ envFrom: [{ configMapRef: { name: 'nope' } }] }),
    configError('configmap "nope" not found'),
  );
  assert.throws(
    () => envOf({ envFrom: [{ secretRef: { name: 'gone' } }] }),
    configError('secret "gone" not found'),
  );
});

test('expandCommand expands $(VAR) in command and args with the resolved environment', () => {
  const envs = [
    { key: 'A', value: '1' },
    { key: 'B', value: 'two words' },
    { key: 'A', value: 'last' },
  ];
  assert.equal(expandCommand(['echo', '$(A)', '$(B)', '$$(A)', '$(NONE)'], envs), [
    'echo',
    'last',
    'two words',
    '$(A)',
    '$(NONE)',
  ]);
  assert.equal(expandCommand(undefined, envs), []);
});

test.run();
