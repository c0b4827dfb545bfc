// Expected text follows Go tabwriter rules as kubectl sets them up (min width 6, padding 3, the last
// column never padded); every multi-row case here was also checked against the real kubectl 1.32.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  formatCell,
  formatLabels,
  noResourcesFound,
  printTable,
  TablePrinter,
  TabWriter,
} from '#lib/cli/print-table.ts';
import { column, type Table, type TableRow } from '#lib/kube/table.ts';

const columns = [
  column('Name', 'string', '', { format: 'name' }),
  column('Ready', 'string', ''),
  column('Status', 'string', ''),
  column('Restarts', 'string', ''),
  column('Age', 'string', ''),
  column('IP', 'string', '', { priority: 1 }),
  column('Node', 'string', '', { priority: 1 }),
];

const row = (cells: unknown[], namespace: string, labels: Record<string, string>): TableRow => ({
  cells,
  object: {
    kind: 'PartialObjectMetadata',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { name: cells[0], namespace, labels },
  },
});

const table = (rows: TableRow[], defs = columns): Table => ({
  kind: 'Table',
  apiVersion: 'meta.k8s.io/v1',
  metadata: { resourceVersion: '7' },
  columnDefinitions: defs,
  rows,
});

const pods = table([
  row(['web', '1/1', 'Running', '4 (10m ago)', '5m2s', '10.0.0.7', 'edge-1'], 'default', {
    tier: 'edge',
    app: 'web',
  }),
  row(
    ['pending-long-name-pod', '0/1', 'ContainerCreating', '0', '5m2s', '<none>', '<none>'],
    'kube-system',
    {},
  ),
]);

test('kubectl get pods: upper-case headers, columns padded to widest cell + 3, last column bare', () => {
  assert.is(
    printTable(pods),
    [
      'NAME                    READY   STATUS              RESTARTS      AGE',
      'web                     1/1     Running             4 (10m ago)   5m2s',
      'pending-long-name-pod   0/1     ContainerCreating   0             5m2s',
      '',
    ].join('\n'),
  );
});

test('-o wide adds the priority-1 columns', () => {
  assert.is(
    printTable(pods, { wide: true }),
    [
      'NAME                    READY   STATUS              RESTARTS      AGE    IP         NODE',
      'web                     1/1     Running             4 (10m ago)   5m2s   10.0.0.7   edge-1',
      'pending-long-name-pod   0/1     ContainerCreating   0             5m2s   <none>     <none>',
      '',
    ].join('\n'),
  );
});

test('-A prepends NAMESPACE from the row object; --show-labels appends sorted labels or <none>', () => {
  assert.is(
    printTable(pods, { withNamespace: true, showLabels: true }),
    [
      'NAMESPACE     NAME                    READY   STATUS              RESTARTS      AGE    LABELS',
      'default       web                     1/1     Running             4 (10m ago)   5m2s   app=web,tier=edge',
      'kube-system   pending-long-name-pod   0/1     ContainerCreating   0             5m2s   <none>',
      '',
    ].join('\n'),
  );
});

test('--no-headers prints only rows; rows without an object get empty NAMESPACE', () => {
  assert.is(
    printTable(pods, { noHeaders: true }),
    [
      'web                     1/1   Running             4 (10m ago)   5m2s',
      'pending-long-name-pod   0/1   ContainerCreating   0             5m2s',
      '',
    ].join('\n'),
  );
  const bare = table([{ cells: ['web', '1/1', 'Running', '0', '5m2s', '', ''] }]);
  assert.is(
    printTable(bare, { withNamespace: true }),
    'NAMESPACE   NAME   READY   STATUS    RESTARTS   AGE\n            web    1/1     Running   0          5m2s\n',
  );
});

test('an empty table prints nothing, not even a header; kubectl says so on stderr instead', () => {
  assert.is(printTable(table([])), '');
  assert.is(printTable(table([]), { noHeaders: true }), '');
  assert.is(noResourcesFound('default'), 'No resources found in default namespace.\n');
  assert.is(noResourcesFound(), 'No resources found\n');
});

test('cells: line breaks cut with ..., ESC escaped, numbers and nulls as Go prints them', () => {
  const defs = [column('A', 'string', ''), column('B', 'string', ''), column('C', 'integer', '')];
  const t = table([{ cells: ['multi\nline', 'a\x1b[31mred', 3] }, { cells: [null, 'ünï', 1.5] }], defs);
  assert.is(
    printTable(t),
    'A          B            C\nmulti...   a^[[31mred   3\n           ünï          1.5\n',
  );
});

test('a row with more cells than columns drops the extra ones', () => {
  const t = table([{ cells: ['x', 'y', 'extra'] }], [column('A', 'string', ''), column('B', 'string', '')]);
  assert.is(printTable(t), 'A     B\nx     y\n');
});

test('formatCell follows fmt.Sprint for JSON-decoded values', () => {
  assert.is(formatCell(3), '3');
  assert.is(formatCell(1.5), '1.5');
  assert.is(formatCell(0.00001), '1e-05');
  assert.is(formatCell(1234567.5), '1.2345675e+06');
  assert.is(formatCell(true), 'true');
  assert.is(formatCell(null), '<nil>');
  assert.is(formatCell({ b: 1, a: 'x' }), 'map[a:x b:1]');
  assert.is(formatCell([1, 'a']), '[1 a]');
  assert.is(formatLabels({ b: '2', a: '1' }), 'a=1,b=2');
  assert.is(formatLabels(undefined), '<none>');
});

test('TabWriter: minimum width 6, trailing empty cells still padded, one-cell lines break blocks', () => {
  const tw = new TabWriter();
  tw.write('A\tB\nx\t\t\nlonger-cell\tz\nno tabs here\nq\tr\n');
  assert.is(
    tw.flush(),
    'A             B\nx                   \nlonger-cell   z\nno tabs here\nq             r\n',
  );
});

test('watch: header once, later rows keep the widths on screen and widen them when needed', () => {
  const p = new TablePrinter();
  let out = p.print(pods);
  const event = (cells: unknown[]) => table([row(cells, 'default', {})], []);
  out += p.print(
    event(['a-much-longer-pod-name-than-before', '1/1', 'Running', '4 (10m ago)', '5m2s', '', '']),
  );
  out += p.print(event(['x', '0/1', 'SomeVeryLongStatusReasonHere', '0', '5m2s', '', '']));
  out += p.print(event(['y', '1/1', 'Running', '4 (10m ago)', '5m2s', '', '']));
  assert.is(
    out,
    [
      'NAME                    READY   STATUS              RESTARTS      AGE',
      'web                     1/1     Running             4 (10m ago)   5m2s',
      'pending-long-name-pod   0/1     ContainerCreating   0             5m2s',
      'a-much-longer-pod-name-than-before   1/1     Running             4 (10m ago)   5m2s',
      'x                                    0/1     SomeVeryLongStatusReasonHere   0             5m2s',
      'y                                    1/1     Running                        4 (10m ago)   5m2s',
      '',
    ].join('\n'),
  );
});

test('watch from an empty list: the header comes with the first row', () => {
  const p = new TablePrinter({ withNamespace: true });
  assert.is(p.print(table([])), '');
  assert.is(
    p.print(table([row(['web', '1/1', 'Running', '0', '5m2s', '', ''], 'default', {})])),
    'NAMESPACE   NAME   READY   STATUS    RESTARTS   AGE\ndefault     web    1/1     Running   0          5m2s\n',
  );
  assert.is(
    p.print(table([row(['db', '0/1', 'Pending', '0', '1s', '', ''], 'default', {})], [])),
    'default     db     0/1     Pending   0          1s\n',
  );
});

test.run();
