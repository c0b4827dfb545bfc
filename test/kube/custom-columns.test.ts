import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  customColumnsRows,
  parseCustomColumns,
  relaxedJsonPathExpression,
} from '#lib/kube/custom-columns.ts';
import { JsonPathError } from '#lib/kube/jsonpath.ts';

// Expected cells below were checked against kubectl 1.32 (`kubectl get pods -o custom-columns=...`).
const pods = [
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-0',
      namespace: 'default',
      labels: { tier: 'frontend', app: 'web' },
      annotations: { note: 'red \x1b[31malert\r' },
      deletionTimestamp: null,
    },
    spec: {
      nodeName: 'edge-1',
      containers: [
        { name: 'nginx', image: 'nginx:1.25', ports: [{ containerPort: 80 }, { containerPort: 443 }] },
        { name: 'sidecar', image: 'busybox:1.36', args: ['sleep', 'infinity'] },
      ],
    },
    status: {
      phase: 'Running',
      podIP: '10.42.0.7',
      score: 0.75,
      ratio: 1234567.5,
      conditions: [
        { type: 'PodScheduled', status: 'True' },
        { type: 'Ready', status: 'True' },
      ],
      containerStatuses: [
        { name: 'nginx', ready: true, restartCount: 0 },
        { name: 'sidecar', ready: true, restartCount: 3 },
      ],
    },
  },
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'db-0', namespace: 'default' },
    spec: { containers: [{ name: 'postgres', image: 'postgres:16' }] },
    status: { phase: 'Pending', conditions: [{ type: 'Ready', status: 'False' }], containerStatuses: [] },
  },
];

const rows = (spec: string, objects: unknown[] = pods) =>
  customColumnsRows(parseCustomColumns(spec), objects);

test('a header row, then one row per object', () => {
  assert.equal(rows('NAME:.metadata.name,STATUS:.status.phase'), [
    ['NAME', 'STATUS'],
    ['web-0', 'Running'],
    ['db-0', 'Pending'],
  ]);
  assert.equal(rows('NAME:.metadata.name', []), [['NAME']]);
});

test('relaxed expressions: with or without the leading dot and braces', () => {
  const spec = 'A:.spec.nodeName,B:spec.nodeName,C:{.spec.nodeName},D:{spec.nodeName}';
  assert.equal(rows(spec, [pods[0]]), [
    ['A', 'B', 'C', 'D'],
    ['edge-1', 'edge-1', 'edge-1', 'edge-1'],
  ]);
  assert.is(relaxedJsonPathExpression('metadata.name'), '{.metadata.name}');
  assert.is(relaxedJsonPathExpression('{.metadata.name}'), '{.metadata.name}');
  assert.is(relaxedJsonPathExpression(''), '');
});

test('several values are joined with a comma; nothing found prints <none>', () => {
  assert.equal(rows('IMAGES:.spec.containers[*].image,PORTS:.spec.containers[*].ports[*].containerPort'), [
    ['IMAGES', 'PORTS'],
    ['nginx:1.25,busybox:1.36', '80,443'],
    ['postgres:16', '<none>'],
  ]);
  assert.equal(rows('IP:.status.podIP,RESTARTS:.status.containerStatuses[*].restartCount,X:'), [
    ['IP', 'RESTARTS', 'X'],
    ['10.42.0.7', '0,3', '<none>'],
    ['<none>', '<none>', '<none>'],
  ]);
});

test('filters work in a column', () => {
  assert.equal(rows('NAME:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].status'), [
    ['NAME', 'READY'],
    ['web-0', 'True'],
    ['db-0', 'False'],
  ]);
});

test('values print as Go fmt.Sprint does, not as JSON', () => {
  const spec =
    'LABELS:.metadata.labels,ARGS:.spec.containers[1].args,PORTS:.spec.containers[0].ports,DEL:.metadata.deletionTimestamp';
  assert.equal(rows(spec, [pods[0]])[1], [
    'map[app:web tier:frontend]',
    '[sleep infinity]',
    '[map[containerPort:80] map[containerPort:443]]',
    '<nil>',
  ]);
  assert.equal(
    rows('S:.status.score,R:.status.ratio,READY:.status.containerStatuses[0].ready', [pods[0]])[1],
    ['0.75', '1.2345675e+06', 'true'],
  );
  assert.equal(rows('C:.status.conditions[*]', [pods[1]])[1], ['map[status:False type:Ready]']);
  assert.equal(rows('N:.n', [{ n: [1, null, 's', { k: null }, {}] }])[1], ['[1 <nil> s map[k:<nil>] map[]]']);
});

test('terminal escape sequences from the object are defused', () => {
  assert.equal(rows('NOTE:.metadata.annotations.note', [pods[0]])[1], ['red ^[[31malert\\r']);
});

test('the header is everything before the first colon', () => {
  assert.equal(rows(':.metadata.name,C:metadata.name:x', [pods[0]]), [
    ['', 'C'],
    ['web-0', '<none>'],
  ]);
});

test('bad specs fail with kubectl messages', () => {
  assert.throws(
    () => parseCustomColumns('foo'),
    (e: Error) => e.message === 'unexpected custom-columns spec: foo, expected <header>:<json-path-expr>',
  );
  assert.throws(
    () => parseCustomColumns(''),
    (e: Error) => e.message === 'custom-columns format specified but no custom columns given',
  );
  assert.throws(
    () => parseCustomColumns('A:{.x}{.y}'),
    (e: Error) =>
      e.message ===
      "unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'",
  );
  // Commas always split columns, so a union cannot appear in a column.
  assert.throws(
    () => parseCustomColumns('A:.x[0,1]'),
    (e: Error) => e.message === 'unexpected custom-columns spec: 1], expected <header>:<json-path-expr>',
  );
  assert.throws(
    () => parseCustomColumns('A:.x['),
    (e: Error) => e instanceof JsonPathError && e.message === 'unterminated array',
  );
});

test('errors other than a missing key still fail the rows', () => {
  const columns = parseCustomColumns('A:.spec.containers[5].name');
  assert.throws(
    () => customColumnsRows(columns, pods),
    (e: Error) => e instanceof JsonPathError && e.message === 'array index out of bounds: index 5, length 2',
  );
});

test.run();
