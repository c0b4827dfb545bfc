import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  applyStrategicMergePatch as apply,
  createStrategicMergePatch as create,
  podSchema,
} from '#lib/kube/strategic-merge.ts';

const cond = (type: string, status: string, extra: Record<string, unknown> = {}) => ({
  type,
  status,
  ...extra,
});

test('create: a kubelet-style status update becomes a minimal patch', () => {
  const original = {
    metadata: { name: 'web', finalizers: ['a'] },
    status: {
      phase: 'Pending',
      conditions: [cond('Initialized', 'True'), cond('Ready', 'False', { reason: 'ContainersNotReady' })],
      containerStatuses: [{ name: 'app', ready: false, state: { waiting: { reason: 'ContainerCreating' } } }],
      podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }],
    },
  };
  const modified = {
    metadata: { name: 'web', finalizers: ['b', 'a'] },
    status: {
      phase: 'Running',
      conditions: [cond('Initialized', 'True'), cond('Ready', 'True')],
      containerStatuses: [{ name: 'app', ready: true, state: { running: { startedAt: 't1' } } }],
      podIPs: [{ ip: '10.0.0.1' }],
    },
  };
  const patch = create(original, modified, podSchema);
  assert.equal(patch, {
    metadata: { finalizers: ['b'], '$setElementOrder/finalizers': ['b', 'a'] },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', reason: null }],
      '$setElementOrder/conditions': [{ type: 'Initialized' }, { type: 'Ready' }],
      containerStatuses: [
        { name: 'app', ready: true, state: { running: { startedAt: 't1' }, waiting: null } },
      ],
      '$setElementOrder/containerStatuses': [{ name: 'app' }],
      podIPs: [{ ip: 'fd00::1', $patch: 'delete' }],
      '$setElementOrder/podIPs': [{ ip: '10.0.0.1' }],
    },
  });
  assert.equal(apply(original, patch, podSchema), modified);
});

test('create: no change is {}, a removed key is null, removed set members are listed', () => {
  const pod = { metadata: { finalizers: ['a', 'b'] }, status: { phase: 'Running', message: 'm' } };
  assert.equal(create(pod, structuredClone(pod), podSchema), {});
  assert.equal(create(pod, { metadata: { finalizers: ['a'] }, status: { phase: 'Running' } }, podSchema), {
    metadata: { '$deleteFromPrimitiveList/finalizers': ['b'], '$setElementOrder/finalizers': ['a'] },
    status: { message: null },
  });
  assert.equal(create({ a: [1, 2] }, { a: [2] }), { a: [2] }, 'lists without a strategy are sent whole');
});

test('create: items of retainKeys lists carry $retainKeys, and replace-strategy objects are sent whole', () => {
  const original = { spec: { volumes: [{ name: 'data', emptyDir: {} }] } };
  const modified = { spec: { volumes: [{ name: 'data', hostPath: { path: '/x' } }] } };
  const patch = create(original, modified, podSchema);
  assert.equal(patch, {
    spec: {
      volumes: [
        { name: 'data', hostPath: { path: '/x' }, emptyDir: null, $retainKeys: ['hostPath', 'name'] },
      ],
      '$setElementOrder/volumes': [{ name: 'data' }],
    },
  });
  assert.equal(apply(original, patch, podSchema), modified);
  const schema = { 'spec.selector': { strategy: 'replace' } } as const;
  assert.equal(
    create({ spec: { selector: { a: '1', b: '2' } } }, { spec: { selector: { a: '1' } } }, schema),
    {
      spec: { selector: { a: '1' } },
    },
  );
});

test('create: rejects documents that are not objects', () => {
  assert.throws(() => create({}, ['x']), /invalid JSON document/);
  assert.throws(() => create('x', {}), /invalid JSON document/);
});

test.run();
