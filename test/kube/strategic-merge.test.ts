import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isStatusError } from '#lib/kube/status.ts';
import { applyStrategicMergePatch as apply, podSchema } from '#lib/kube/strategic-merge.ts';

function assertBadRequest(fn: () => unknown, message: string): void {
  try {
    fn();
  } catch (e) {
    if (!isStatusError(e)) throw e;
    assert.is(e.toStatus().code, 400);
    assert.is(e.message, message);
    return;
  }
  assert.unreachable(`expected BadRequest: ${message}`);
}

const cond = (type: string, status: string, extra: Record<string, unknown> = {}) => ({
  type,
  status,
  ...extra,
});

test('conditions merge by type and $setElementOrder decides the final order', () => {
  const original = {
    status: {
      conditions: [cond('Initialized', 'True'), cond('Ready', 'False', { reason: 'ContainersNotReady' })],
    },
  };
  const patch = {
    status: {
      '$setElementOrder/conditions': [
        { type: 'PodScheduled' },
        { type: 'Initialized' },
        { type: 'ContainersReady' },
        { type: 'Ready' },
      ],
      conditions: [cond('PodScheduled', 'True'), cond('Ready', 'True', { reason: null })],
    },
  };
  assert.equal(apply(original, patch, podSchema), {
    status: {
      conditions: [cond('PodScheduled', 'True'), cond('Initialized', 'True'), cond('Ready', 'True')],
    },
  });
});

test('without $setElementOrder updated items keep their place and new ones are appended', () => {
  const original = { status: { conditions: [cond('A', 'True'), cond('B', 'False')] } };
  const patch = { status: { conditions: [cond('C', 'True'), cond('A', 'False')] } };
  assert.equal(apply(original, patch, podSchema).status.conditions, [
    cond('A', 'False'),
    cond('B', 'False'),
    cond('C', 'True'),
  ]);
});

test('$setElementOrder alone reorders; items it does not name keep their place in the live list', () => {
  const original = { status: { conditions: [cond('A', 'True'), cond('B', 'True'), cond('C', 'True')] } };
  const reorder = { status: { '$setElementOrder/conditions': [{ type: 'C' }, { type: 'A' }] } };
  assert.equal(
    apply(original, reorder, podSchema).status.conditions.map((c) => c.type),
    ['B', 'C', 'A'],
  );
  const primitive = { metadata: { finalizers: ['a', 'b'] } };
  assert.equal(apply(primitive, { metadata: { '$setElementOrder/finalizers': ['b', 'a'] } }, podSchema), {
    metadata: { finalizers: ['b', 'a'] },
  });
});

test('container statuses merge by name, recursively, leaving other containers alone', () => {
  const original = {
    status: {
      containerStatuses: [
        { name: 'app', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } },
        { name: 'sidecar', ready: true, restartCount: 2, state: { running: { startedAt: 't0' } } },
      ],
    },
  };
  const patch = {
    status: {
      containerStatuses: [
        { name: 'app', ready: true, state: { running: { startedAt: 't1' }, waiting: null } },
      ],
    },
  };
  assert.equal(apply(original, patch, podSchema).status.containerStatuses, [
    { name: 'app', ready: true, restartCount: 0, state: { running: { startedAt: 't1' } } },
    { name: 'sidecar', ready: true, restartCount: 2, state: { running: { startedAt: 't0' } } },
  ]);
});

test('null deletes a key; a null for an absent key or inside a new object is dropped', () => {
  const original = { status: { phase: 'Running', message: 'hi', podIP: '10.0.0.1' } };
  const patch = {
    status: { message: null, reason: null, nominatedNodeName: 'n', resize: { a: null, b: 1 } },
  };
  assert.equal(apply(original, patch, podSchema), {
    status: { phase: 'Running', podIP: '10.0.0.1', nominatedNodeName: 'n', resize: { b: 1 } },
  });
});

test('$patch: delete removes the keyed item; $patch: replace replaces a list or an object wholesale', () => {
  const original = {
    status: {
      podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }],
      conditions: [cond('A', 'True'), cond('B', 'True')],
      resize: { cpu: 'InProgress', memory: 'Deferred' },
    },
  };
  const patch = {
    status: {
      podIPs: [{ ip: 'fd00::1', $patch: 'delete' }],
      conditions: [{ $patch: 'replace' }, cond('C', 'False')],
      resize: { $patch: 'replace', cpu: 'Done' },
    },
  };
  assert.equal(apply(original, patch, podSchema), {
    status: { podIPs: [{ ip: '10.0.0.1' }], conditions: [cond('C', 'False')], resize: { cpu: 'Done' } },
  });
  assert.equal(apply(original, { status: { resize: { $patch: 'delete' } } }, podSchema).status.resize, {});
  assert.equal(apply(original, { $patch: 'delete' }, podSchema), {});
});

test('lists without a merge key are replaced, and without a schema every list is', () => {
  const original = {
    spec: { tolerations: [{ key: 'a' }, { key: 'b' }] },
    status: { conditions: [cond('A', 'True')] },
  };
  const patch = { spec: { tolerations: [{ key: 'c' }] }, status: { conditions: [cond('B', 'True')] } };
  assert.equal(apply(original, patch, podSchema), {
    spec: { tolerations: [{ key: 'c' }] },
    status: { conditions: [cond('A', 'True'), cond('B', 'True')] },
  });
  assert.equal(apply(original, patch), {
    spec: { tolerations: [{ key: 'c' }] },
    status: { conditions: [cond('B', 'True')] },
  });
  assert.equal(apply({ args: ['a', 'b'] }, { args: ['b'] }, podSchema), { args: ['b'] });
});

test('finalizers merge as a set and $deleteFromPrimitiveList removes members', () => {
  const original = { metadata: { finalizers: ['a', 'b'] } };
  assert.equal(apply(original, { metadata: { finalizers: ['c', 'a'] } }, podSchema).metadata.finalizers, [
    'a',
    'b',
    'c',
  ]);
  const patch = { metadata: { finalizers: ['b'], '$deleteFromPrimitiveList/finalizers': ['b', 'x'] } };
  assert.equal(apply(original, patch, podSchema).metadata.finalizers, ['a']);
});

test('nested keyed lists merge by their own keys (env by name, ports by containerPort)', () => {
  const original = {
    spec: {
      containers: [
        { name: 'app', env: [{ name: 'A', value: '1' }], ports: [{ containerPort: 80, name: 'http' }] },
        { name: 'db', image: 'pg' },
      ],
    },
  };
  const patch = {
    spec: {
      containers: [
        { name: 'app', env: [{ name: 'B', value: '2' }], ports: [{ containerPort: 80, protocol: 'TCP' }] },
      ],
    },
  };
  assert.equal(apply(original, patch, podSchema).spec.containers, [
    {
      name: 'app',
      env: [
        { name: 'A', value: '1' },
        { name: 'B', value: '2' },
      ],
      ports: [{ containerPort: 80, name: 'http', protocol: 'TCP' }],
    },
    { name: 'db', image: 'pg' },
  ]);
});

test('$retainKeys drops the live keys it does not list', () => {
  const original = { spec: { volumes: [{ name: 'data', emptyDir: {}, extra: 1 }] } };
  const patch = {
    spec: { volumes: [{ name: 'data', hostPath: { path: '/x' }, $retainKeys: ['hostPath', 'name'] }] },
  };
  assert.equal(apply(original, patch, podSchema).spec.volumes, [{ name: 'data', hostPath: { path: '/x' } }]);
});

test('inputs are never mutated and the result shares nothing with them', () => {
  const original = deepFreeze({
    status: { conditions: [cond('A', 'True')], phase: 'Pending' },
    metadata: {},
  });
  const patch = deepFreeze({
    status: { conditions: [cond('A', 'False')], phase: 'Running', hostIPs: [{ ip: '1.2.3.4' }] },
    metadata: { labels: { a: 'b' } },
  });
  const before = JSON.stringify([original, patch]);
  const out = apply(original, patch, podSchema) as unknown as Record<string, Record<string, unknown[]>>;
  (out.status!.conditions![0] as Record<string, unknown>).status = 'Unknown';
  (out.status!.hostIPs as unknown[]).push({ ip: 'x' });
  assert.is(JSON.stringify([original, patch]), before);
  const none = apply(original, {}, podSchema);
  assert.equal(none, original);
  assert.is.not(none, original);
});

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object') for (const x of Object.values(v)) deepFreeze(x);
  return Object.freeze(v);
}

const malformed: [string, unknown, string][] = [
  ['a patch that is not an object', ['x'], 'invalid JSON document'],
  [
    'a keyed item without its key',
    { status: { conditions: [{ status: 'True' }] } },
    'map: map[status:True] does not contain declared merge key: type',
  ],
  [
    'a delete without the key',
    { status: { conditions: [{ $patch: 'delete' }] } },
    'map: map[$patch:delete] does not contain declared merge key: type',
  ],
  [
    'an unknown map directive',
    { status: { $patch: 'nuke' } },
    'unknown patch type: nuke in map: map[$patch:nuke]',
  ],
  [
    'an unknown list directive',
    { status: { podIPs: [{ $patch: 'x', ip: '1' }] } },
    'unknown patch type: x in map: map[$patch:x ip:1]',
  ],
  [
    'a merge directive in a list',
    { status: { podIPs: [{ $patch: 'merge' }] } },
    'merging lists cannot yet be specified in the patch',
  ],
  [
    'a scalar in a keyed list',
    { status: { podIPs: ['1.2.3.4', { ip: 'x' }] } },
    'expected a map[string]interface {}, but received a string',
  ],
  [
    'an order list that is not a list',
    { status: { '$setElementOrder/conditions': 'x' } },
    'invalid patch format of setElementOrder list',
  ],
  [
    'an order item without the key',
    { status: { '$setElementOrder/conditions': [{ name: 'x' }] } },
    'map: map[name:x] does not contain declared merge key: type',
  ],
  [
    'a patch list out of the stated order',
    {
      status: {
        '$setElementOrder/conditions': [{ type: 'A' }, { type: 'B' }],
        conditions: [cond('B', 'x'), cond('A', 'x')],
      },
    },
    "The order in patch list:\n[map[status:x type:B] map[status:x type:A]]\n doesn't match $setElementOrder list:\n[map[type:A] map[type:B]]\n",
  ],
  [
    '$retainKeys that is not a list',
    { status: { $retainKeys: 'phase' } },
    'invalid patch format of retainKeys',
  ],
  [
    'a key that $retainKeys does not list',
    { status: { $retainKeys: ['phase'], podIP: 'x' } },
    'invalid patch format of retainKeys',
  ],
  [
    '$deleteFromPrimitiveList that is not a list',
    { metadata: { '$deleteFromPrimitiveList/finalizers': 'a' } },
    'invalid patch format of primitive list',
  ],
];

for (const [what, patch, message] of malformed) {
  test(`rejects ${what} with 400`, () => {
    assertBadRequest(() => apply({ status: { conditions: [cond('A', 'True')] } }, patch, podSchema), message);
  });
}

test('rejects an original that is not an object, and lists of objects merged without a key', () => {
  assertBadRequest(() => apply('x', {}), 'invalid JSON document');
  assertBadRequest(
    () => apply({ items: [{ a: 1 }] }, { items: [{ a: 2 }] }, { items: { strategy: 'merge' } }),
    'cannot merge lists without merge key for items',
  );
});

test.run();
