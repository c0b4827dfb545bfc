import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compileJsonPath, JsonPathError } from '#lib/kube/jsonpath.ts';

// Expected strings below were checked against kubectl 1.32 (`kubectl get ... -o jsonpath=...`).
const pod = (name: string, phase: string, ready: string, restarts: number[], extra: object = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: 'default',
    uid: `uid-${name}`,
    creationTimestamp: '2024-05-01T10:00:00Z',
    labels: { app: name.split('-')[0], 'app.kubernetes.io/name': name.split('-')[0] },
  },
  spec: {
    nodeName: 'edge-1',
    terminationGracePeriodSeconds: 30,
    containers: restarts.map((_, i) => ({
      name: i === 0 ? 'main' : `side${i}`,
      image: i === 0 ? `${name.split('-')[0]}:1.0` : 'busybox:1.36',
      ports:
        i === 0
          ? [
              { containerPort: 80, protocol: 'TCP' },
              { containerPort: 443, protocol: 'TCP' },
            ]
          : [],
    })),
  },
  status: {
    phase,
    conditions: [
      { type: 'PodScheduled', status: 'True', lastProbeTime: null },
      { type: 'Ready', status: ready, lastProbeTime: null },
    ],
    containerStatuses: restarts.map((restartCount, i) => ({
      name: i === 0 ? 'main' : `side${i}`,
      ready: ready === 'True',
      restartCount,
    })),
    ...extra,
  },
});

const web = pod('web-0', 'Running', 'True', [0, 3], { podIP: '10.42.0.7', score: 0.75, ratio: 1234567.5 });
const list = {
  apiVersion: 'v1',
  kind: 'List',
  metadata: { resourceVersion: '' },
  items: [web, pod('api-0', 'Running', 'True', [1]), pod('db-0', 'Pending', 'False', [12])],
};

const run = (template: string, data: unknown = list, allowMissingKeys = false) =>
  compileJsonPath(template).execute(data, { allowMissingKeys });

const fails = (template: string, message: string, phase: 'parse' | 'execute', data: unknown = list) => {
  try {
    run(template, data);
  } catch (e) {
    assert.instance(e, JsonPathError);
    assert.is((e as JsonPathError).message, message, template);
    assert.is((e as JsonPathError).phase, phase, template);
    return;
  }
  assert.unreachable(`${template} should fail with ${message}`);
};

test('the outputs kubectl users rely on', () => {
  assert.is(run('{.items[*].metadata.name}'), 'web-0 api-0 db-0');
  assert.is(
    run('{range .items[*]}{.metadata.name}{"\\t"}{.status.phase}{"\\n"}{end}'),
    'web-0\tRunning\napi-0\tRunning\ndb-0\tPending\n',
  );
  assert.is(run('{.status.conditions[?(@.type=="Ready")].status}', web), 'True');
  assert.is(run('{.metadata.labels}', { metadata: { labels: { app: 'web' } } }), '{"app":"web"}');
});

test('field access: dots, quoted keys, escaped dots, $ and @', () => {
  assert.is(run('{.metadata.namespace}', web), 'default');
  assert.is(run("{['metadata']['name']}", web), 'web-0');
  assert.is(run('{.metadata.labels.app\\.kubernetes\\.io/name}', web), 'web');
  assert.is(run('{$.items[0].metadata.name} {@.items[1].metadata.name}'), 'web-0 api-0');
  assert.is(run('{ .kind }'), 'List');
  // kubectl reads a quoted key as a path, so a key with dots needs the escaped form above.
  assert.is(run("{.metadata.labels['app.kubernetes.io/name']}", web, true), '');
  fails('{.metadata.labels["app"]}', 'invalid array index "app"', 'parse');
});

test('scalars print raw, maps and arrays as compact JSON with sorted keys', () => {
  assert.is(
    run('{.spec.terminationGracePeriodSeconds} {.status.score} {.status.ratio}', web),
    '30 0.75 1.2345675e+06',
  );
  assert.is(
    run('{.status.containerStatuses[0].ready} {.status.conditions[0].lastProbeTime}', web),
    'true null',
  );
  assert.is(run('{.metadata.labels}', web), '{"app":"web","app.kubernetes.io/name":"web"}');
  assert.is(run('{.spec.containers[0].ports[0]}', web), '{"containerPort":80,"protocol":"TCP"}');
  assert.is(run('{.spec.containers[1].ports}', web), '[]');
  assert.is(run('{.note}', { note: 'a<b & "c"' }), 'a<b & "c"');
  assert.is(
    run('{.n}', { n: { note: 'a<b & c', tiny: 1e-7, big: 1e21 } }),
    '{"big":1e+21,"note":"a\\u003cb \\u0026 c","tiny":1e-7}',
  );
  assert.is(run('{.n} {.n.x}', { n: { x: 100000.5, y: 0.00001 } }), '{"x":100000.5,"y":0.00001} 100000.5');
  assert.is(run('{.y}', { y: 0.00001 }), '1e-05');
});

test('array indexes and slices', () => {
  assert.is(run('{.items[0].metadata.name} {.items[-1].metadata.name}'), 'web-0 db-0');
  assert.is(run('{.items[1:3].metadata.name}'), 'api-0 db-0');
  assert.is(run('{.items[-2:].metadata.name}'), 'api-0 db-0');
  assert.is(run('{.items[:2].metadata.name}'), 'web-0 api-0');
  assert.is(run('{.items[::2].metadata.name}'), 'web-0 db-0');
  assert.is(run('{.items[0:0].metadata.name}|'), '|');
  fails('{.items[5].metadata.name}', 'array index out of bounds: index 5, length 3', 'execute');
  fails('{.items[-4]}', 'array index out of bounds: index -1, length 3', 'execute');
  fails('{.items[0:4]}', 'array index out of bounds: index 3, length 3', 'execute');
  fails('{.items[2:1]}', 'starting index 2 is greater than ending index 1', 'execute');
  fails('{.items[0:3:0]}', 'step must be > 0', 'execute');
  fails('{.metadata[0]}', 'map[string]interface {} is not array or slice', 'execute', web);
  fails('{.metadata.name[0]}', 'string is not array or slice', 'execute', web);
  fails('{.spec.terminationGracePeriodSeconds[0]}', 'int64 is not array or slice', 'execute', web);
  // An empty list has no index 0, missing keys or not.
  fails('{.items[0]}', 'array index out of bounds: index 0, length 0', 'execute', { items: [] });
});

test('wildcards and unions', () => {
  assert.is(run('{.items[*].spec.containers[0].ports[*].containerPort}'), '80 443 80 443 80 443');
  // client-go quirk: an empty slice (side1 has no ports) ends the step for the values after it too.
  assert.is(run('{.items[*].spec.containers[*].ports[*].containerPort}'), '80 443');
  assert.is(run('{.spec.containers[0].ports[0].*}', web), '80 TCP');
  assert.is(run('{.items[0,2].metadata.name}'), 'web-0 db-0');
  assert.is(run("{.items[0]['metadata.name', 'status.phase']}"), 'web-0 Running');
  // A Go string is indexed by byte.
  assert.is(run('{.metadata.uid.*}', { metadata: { uid: 'ab' } }), '97 98');
  assert.is(run('{.items[*].status.conditions[*]}|', { items: [{ status: { conditions: [] } }] }), '|');
});

test('recursive descent', () => {
  assert.is(run('{..image}'), 'web:1.0 busybox:1.36 api:1.0 db:1.0');
  assert.is(run('{.items[0]..containerPort}'), '80 443');
  assert.is(run('{...restartCount}', web), '0 3');
  // `{..}` lists every value with something inside it: maps, arrays and non-empty strings.
  assert.is(run('{..}', { a: { b: 'x', c: 1 }, d: [] }), '{"a":{"b":"x","c":1},"d":[]} {"b":"x","c":1} x');
});

test('filters compare like Go templates', () => {
  assert.is(run('{.items[?(@.status.phase!="Running")].metadata.name}'), 'db-0');
  assert.is(run("{.items[?(@.status.phase=='Running')].metadata.name}"), 'web-0 api-0');
  const statuses = '{.items[*].status.containerStatuses';
  assert.is(run(`${statuses}[?(@.restartCount>2)].restartCount}`), '3 12');
  assert.is(run(`${statuses}[?(@.restartCount>=3)].restartCount}`), '3 12');
  assert.is(run(`${statuses}[?(@.restartCount<3)].restartCount}`), '0 1');
  assert.is(run(`${statuses}[?(@.restartCount<=3)].restartCount}`), '0 3 1');
  assert.is(run(`${statuses}[?(@.ready==false)].name}`), 'main');
  assert.is(run('{.items[?( @.status.phase == "Pending" )].metadata.name}'), 'db-0');
  assert.is(run('{.items[?(@.metadata.name>"b")].metadata.name}'), 'web-0 db-0');
  fails(`${statuses}[?(@.restartCount==1.0)]}`, 'incompatible types for comparison', 'execute');
  fails(`${statuses}[?(@.restartCount=="3")]}`, 'incompatible types for comparison', 'execute');
  fails(`${statuses}[?(@.ready>true)]}`, 'invalid type for comparison', 'execute');
  fails('{.status.conditions[?(@.lastProbeTime=="x")]}', 'invalid type for comparison', 'execute', web);
  fails(`${statuses}[?(@.restartCount<>1)]}`, 'unrecognized filter operator <>', 'execute');
  fails('{.items[?(@..containerPort==80)]}', 'can only compare one element at a time', 'execute');
  // The first `)` ends a filter, so kubectl cannot nest them.
  fails('{.spec.containers[?(@.ports[?(@.containerPort==443)])].name}', 'unterminated filter', 'parse');
  fails('{.metadata[?(@.x)]}', 'map[app:web] is not array or slice and cannot be filtered', 'execute', {
    metadata: { app: 'web' },
  });
});

test('existence filters and missing keys inside filters', () => {
  assert.is(run('{.items[?(@.status.podIP)].metadata.name}'), 'web-0');
  // A key that is present counts even when it is null.
  assert.is(run('{.status.conditions[?(@.lastProbeTime)].type}', web), 'PodScheduled Ready');
  const named = '{.items[?(@.status.podIP=="10.42.0.7")].metadata.name}';
  assert.is(run(named, list, true), 'web-0');
  fails(named, 'podIP is not found', 'execute');
  // kubectl quirk: a failed step inside an existence filter still counts as a match.
  assert.is(run('{.spec.containers[?(@.ports[5])].name}', web), 'main side1');
});

test('missing keys fail unless allowMissingKeys is on, as kubectl get sets it', () => {
  fails('{.metadata.nope}', 'nope is not found', 'execute', web);
  fails('{.items[*].status.podIP}', 'podIP is not found', 'execute', { items: [{ status: {} }] });
  assert.is(run('before-{.metadata.nope}-after', web, true), 'before--after');
  assert.is(run('{.items[*].status.podIP}', list, true), '10.42.0.7');
  // `{.}` asks for the key "", so kubectl prints nothing; `{@}` is the whole object.
  assert.is(run('{.}', web, true), '');
  fails('{.}', ' is not found', 'execute', web);
  assert.is(
    run('{@}', { apiVersion: 'v1', kind: 'Pod', a: [1, null] }),
    '{"a":[1,null],"apiVersion":"v1","kind":"Pod"}',
  );
});

test('ranges nest, and an empty range prints nothing', () => {
  const t = '{range .items[*]}{.metadata.name}:{range .spec.containers[*]}{.name},{end};{end}';
  assert.is(run(t), 'web-0:main,side1,;api-0:main,;db-0:main,;');
  const two =
    '{range .items[0:2]}{range .spec.containers[*]}{.image} {end}|{range .status.containerStatuses[*]}{.restartCount} {end}{"\\n"}{end}';
  assert.is(run(two), 'web:1.0 busybox:1.36 |0 3 \napi:1.0 |1 \n');
  assert.is(
    run('{range .items[*]}[{.metadata.name}, {.metadata.labels.app}] {end}{.kind}'),
    '[web-0, web] [api-0, api] [db-0, db] List',
  );
  assert.is(run('{range .items[?(@.status.phase=="Pending")]}{.metadata.name}{"\\n"}{end}'), 'db-0\n');
  assert.is(run('{range .items[*]}{.metadata.name}{end}done', { items: [] }, true), 'done');
  // The empty body is still walked, so a missing key there fails without allowMissingKeys.
  fails('{range .items[*]}{.metadata.name}{end}', 'metadata is not found', 'execute', { items: [] });
  // Without {end}, kubectl runs the body per item and then once more on the root.
  assert.is(run('{range .items[*]}{.metadata.name}{"\\n"}', list, true), 'web-0\napi-0\ndb-0\n\n');
});

test('a compiled template can be executed again', () => {
  const path = compileJsonPath('{range .items[*]}{.metadata.name} {end}');
  assert.is(path.execute(list), 'web-0 api-0 db-0 ');
  assert.is(path.execute(list), 'web-0 api-0 db-0 ');
  assert.is(path.template, '{range .items[*]}{.metadata.name} {end}');
});

test('string literals and other literal actions', () => {
  assert.is(run('{.kind}{"\\n"}{"\\t"}{"}"}'), 'List\n\t}');
  assert.is(run(`{'x"y'} {"\\u00e9\\x41\\101"}`), 'x"y éAA');
  assert.is(run('{5} {-3} {1.50} {true} {2.0}', {}), '5 -3 1.5 true 2');
  assert.is(run('plain text {.kind}}'), 'plain text List}');
  assert.is(run(''), '');
});

test('findResults gives the raw values, one list per action or text', () => {
  const results = compileJsonPath(
    '{.items[*].metadata.name}:{.items[0].spec.containers[0].ports[0]}',
  ).findResults(list);
  assert.equal(results, [['web-0', 'api-0', 'db-0'], [':'], [{ containerPort: 80, protocol: 'TCP' }]]);
  assert.equal(compileJsonPath('{.nope}').findResults(web, { allowMissingKeys: true }), [[]]);
});

test('parse errors carry kubectl messages', () => {
  fails('{.metadata.name', 'unclosed action', 'parse');
  fails('{!}', "unrecognized character in action: U+0021 '!'", 'parse');
  fails('{.a\tb}', 'unrecognized character in action: U+0009', 'parse');
  fails('{{.kind}}', "unrecognized character in action: U+007B '{'", 'parse');
  fails('{.items[0}', 'unterminated array', 'parse');
  fails('{.items[x]}', 'invalid array index x', 'parse');
  fails('{.items[-]}', 'array index - is not a number', 'parse');
  fails('{.items[?(@.x}', 'unterminated filter', 'parse');
  fails('{.items[?(@.x)}', 'unclosed array expect ]', 'parse');
  fails('{"abc}', 'unterminated quoted string', 'parse');
  fails('{"a\\qb"}', 'unquote string "a\\qb" error invalid syntax', 'parse');
  fails('{....a}', 'invalid multiple recursive descent', 'parse');
  fails('{1.2.3}', 'cannot parse number 1.2.3', 'parse');
  fails('{.items[?(@.status.phase =~ "Run")]}', "unrecognized character in action: U+007E '~'", 'parse');
});

test('execution errors carry kubectl messages', () => {
  fails('{hello}', 'unrecognized identifier hello', 'execute');
  fails('{end}', 'not in range, nothing to end', 'execute');
  fails('{range .items[*]}{.metadata.name}{end}{end}', 'not in range, nothing to end', 'execute');
  fails('{.items.metadata}', 'metadata is not found', 'execute');
});

test.run();
