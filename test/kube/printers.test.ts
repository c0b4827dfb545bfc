import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type CoreEvent, eventColumns, eventTable, printEvent } from '#lib/kube/printers/events.ts';
import { namespaceTable } from '#lib/kube/printers/namespaces.ts';
import { podColumns, podSummary, podTable, printPod } from '#lib/kube/printers/pods.ts';
import { isStatusError } from '#lib/kube/status.ts';
import { parseIncludeObject } from '#lib/kube/table.ts';
import type { ContainerState, ContainerStatus, Pod, PodStatus } from '#lib/kube/types.ts';

const NOW = Date.parse('2025-03-01T12:00:00Z');
const ago = (seconds: number) => new Date(NOW - seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');

const cs = (name: string, state: ContainerState, extra: Partial<ContainerStatus> = {}): ContainerStatus => ({
  name,
  state,
  ready: false,
  restartCount: 0,
  image: 'busybox',
  imageID: '',
  ...extra,
});
const running = (name: string, extra: Partial<ContainerStatus> = {}) =>
  cs(name, { running: { startedAt: ago(60) } }, { ready: true, started: true, ...extra });
const waiting = (reason: string): ContainerState => ({ waiting: { reason } });
const done = (reason = 'Completed'): ContainerState => ({ terminated: { exitCode: 0, reason } });
/** restartCount plus a lastState that finished `seconds` ago. */
const restarted = (restartCount: number, seconds: number): Partial<ContainerStatus> => ({
  restartCount,
  lastState: { terminated: { exitCode: 1, finishedAt: ago(seconds) } },
});

function pod(status: PodStatus, spec: Partial<Pod['spec']> = {}, meta: Partial<Pod['metadata']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: 'u1', creationTimestamp: ago(302), ...meta },
    spec: { containers: [{ name: 'app' }], nodeName: 'edge-1', ...spec },
    status,
  };
}
const statusOf = (p: Pod) => podSummary(p, NOW).status;

test('pod columns match upstream names, types, formats and priorities', () => {
  const defs = podColumns.map((c) => `${c.name}|${c.type}|${c.format}|${c.priority}`).join(' ');
  const want =
    'Name|string|name|0 Ready|string||0 Status|string||0 Restarts|string||0 Age|string||0 IP|string||1 Node|string||1 Nominated Node|string||1 Readiness Gates|string||1';
  assert.is(defs, want);
  assert.match(podColumns[3]!.description, 'when the last container in this pod has restarted');
});

test('Running pod: all nine cells, <none> for empty wide fields', () => {
  const p = pod({ phase: 'Running', podIP: '10.0.0.7', containerStatuses: [running('app')] });
  assert.equal(printPod(p, NOW), {
    cells: ['web', '1/1', 'Running', '0', '5m2s', '10.0.0.7', 'edge-1', '<none>', '<none>'],
  });
  const empty = pod({ phase: 'Pending' });
  delete empty.spec.nodeName;
  assert.equal(printPod(empty, NOW).cells.slice(5), ['<none>', '<none>', '<none>', '<none>']);
});

test('podIPs[0] wins over podIP; nominated node and readiness gates 1/2', () => {
  const p = pod(
    {
      phase: 'Running',
      podIP: '10.0.0.9',
      podIPs: [{ ip: 'fd00::9' }, { ip: '10.0.0.9' }],
      nominatedNodeName: 'edge-2',
      conditions: [
        { type: 'example.com/lb', status: 'True' },
        { type: 'example.com/dns', status: 'False' },
      ],
    },
    { readinessGates: [{ conditionType: 'example.com/lb' }, { conditionType: 'example.com/dns' }] },
  );
  assert.equal(printPod(p, NOW).cells.slice(5), ['fd00::9', 'edge-1', 'edge-2', '1/2']);
});

test('Pending with a waiting container shows the waiting reason: ContainerCreating', () => {
  const p = pod({ phase: 'Pending', containerStatuses: [cs('app', waiting('ContainerCreating'))] });
  assert.equal(podSummary(p, NOW), { ready: '0/1', status: 'ContainerCreating', restarts: '0' });
  assert.is(statusOf(pod({ phase: 'Pending' })), 'Pending');
});

test('Completed, and the row condition the API server adds for finished pods', () => {
  const p = pod({ phase: 'Succeeded', containerStatuses: [cs('app', done())] });
  const row = printPod(p, NOW);
  assert.is(row.cells[2], 'Completed');
  assert.is(row.cells[1], '0/1');
  const succeeded = { type: 'Completed', status: 'True', reason: 'Succeeded' };
  assert.equal(row.conditions, [{ ...succeeded, message: 'The pod has completed successfully.' }]);
  const failed = printPod(pod({ phase: 'Failed' }), NOW);
  assert.is(failed.conditions?.[0]?.reason, 'Failed');
});

test('CrashLoopBackOff with restarts counted from the latest lastState.terminated.finishedAt', () => {
  const p = pod({
    phase: 'Running',
    containerStatuses: [cs('app', waiting('CrashLoopBackOff'), restarted(4, 600))],
  });
  assert.equal(podSummary(p, NOW), { ready: '0/1', status: 'CrashLoopBackOff', restarts: '4 (10m ago)' });
});

test('Restarts takes the newest finishedAt across containers; no date means a bare count', () => {
  const p = pod(
    {
      phase: 'Running',
      containerStatuses: [running('a', restarted(1, 3 * 86400)), running('b', restarted(2, 90))],
    },
    { containers: [{ name: 'a' }, { name: 'b' }] },
  );
  assert.equal(podSummary(p, NOW), { ready: '2/2', status: 'Running', restarts: '3 (90s ago)' });
  const bare = pod({ phase: 'Running', containerStatuses: [running('app', { restartCount: 2 })] });
  assert.is(podSummary(bare, NOW).restarts, '2');
});

test('terminated containers: Error, ExitCode:3, Signal:9', () => {
  const term = (t: NonNullable<ContainerState['terminated']>) =>
    statusOf(pod({ phase: 'Failed', containerStatuses: [cs('app', { terminated: t })] }));
  assert.is(term({ exitCode: 1, reason: 'Error' }), 'Error');
  assert.is(term({ exitCode: 3 }), 'ExitCode:3');
  assert.is(term({ exitCode: 137, signal: 9 }), 'Signal:9');
});

test('the first container has the last word (containers are walked backwards)', () => {
  const p = pod(
    {
      phase: 'Running',
      containerStatuses: [cs('a', waiting('ImagePullBackOff')), cs('b', waiting('ErrImagePull'))],
    },
    { containers: [{ name: 'a' }, { name: 'b' }] },
  );
  assert.is(statusOf(p), 'ImagePullBackOff');
});

test('NotReady: one container Completed, another running, pod Ready condition false', () => {
  const status = (ready: 'True' | 'False'): PodStatus => ({
    phase: 'Running',
    conditions: [{ type: 'Ready', status: ready }],
    containerStatuses: [cs('job', done()), running('server')],
  });
  const spec = { containers: [{ name: 'job' }, { name: 'server' }] };
  assert.equal(podSummary(pod(status('False'), spec), NOW), {
    ready: '1/2',
    status: 'NotReady',
    restarts: '0',
  });
  assert.is(statusOf(pod(status('True'), spec)), 'Running');
});

test('init containers: Init:0/2 while the first runs, Init:1/2 after it succeeded', () => {
  const spec = { initContainers: [{ name: 'i1' }, { name: 'i2' }] };
  const first = pod(
    {
      phase: 'Pending',
      initContainerStatuses: [running('i1', { ready: false }), cs('i2', waiting('PodInitializing'))],
    },
    spec,
  );
  assert.equal(podSummary(first, NOW), { ready: '0/1', status: 'Init:0/2', restarts: '0' });
  const second = pod({ phase: 'Pending', initContainerStatuses: [cs('i1', done()), running('i2')] }, spec);
  assert.is(statusOf(second), 'Init:1/2');
});

test('init containers: Init:CrashLoopBackOff counts init restarts; Init:Error, Init:ExitCode:N, Init:Signal:N', () => {
  const spec = { initContainers: [{ name: 'i1' }] };
  const crash = pod(
    {
      phase: 'Pending',
      initContainerStatuses: [cs('i1', waiting('CrashLoopBackOff'), restarted(3, 30))],
      containerStatuses: [cs('app', waiting('PodInitializing'))],
    },
    spec,
  );
  assert.equal(podSummary(crash, NOW), {
    ready: '0/1',
    status: 'Init:CrashLoopBackOff',
    restarts: '3 (30s ago)',
  });
  const init = (t: NonNullable<ContainerState['terminated']>) =>
    statusOf(pod({ phase: 'Pending', initContainerStatuses: [cs('i1', { terminated: t })] }, spec));
  assert.is(init({ exitCode: 1, reason: 'Error' }), 'Init:Error');
  assert.is(init({ exitCode: 2 }), 'Init:ExitCode:2');
  assert.is(init({ exitCode: 143, signal: 15 }), 'Init:Signal:15');
});

test('sidecars (restartable init containers) count in READY and only their restarts carry over', () => {
  const p = pod(
    {
      phase: 'Running',
      conditions: [
        { type: 'Initialized', status: 'True' },
        { type: 'Ready', status: 'True' },
      ],
      initContainerStatuses: [cs('setup', done(), { restartCount: 5 }), running('proxy', restarted(1, 120))],
      containerStatuses: [running('app')],
    },
    { initContainers: [{ name: 'setup' }, { name: 'proxy', restartPolicy: 'Always' }] },
  );
  assert.equal(podSummary(p, NOW), { ready: '2/2', status: 'Running', restarts: '1 (2m ago)' });
});

test('Terminating once deletionTimestamp is set, unless finished; Unknown for NodeLost', () => {
  const deleting = { deletionTimestamp: ago(5) };
  const live = pod({ phase: 'Running', containerStatuses: [running('app')] }, {}, deleting);
  assert.is(statusOf(live), 'Terminating');
  assert.is(statusOf(pod({ phase: 'Succeeded' }, {}, deleting)), 'Succeeded');
  assert.is(statusOf(pod({ phase: 'Running', reason: 'NodeLost' }, {}, deleting)), 'Unknown');
});

test('status.reason overrides the phase; SchedulingGated; missing creationTimestamp is <unknown>', () => {
  assert.is(statusOf(pod({ phase: 'Failed', reason: 'Evicted' })), 'Evicted');
  const gated = pod({
    phase: 'Pending',
    conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }],
  });
  assert.is(statusOf(gated), 'SchedulingGated');
  assert.is(printPod(pod({ phase: 'Running' }, {}, { creationTimestamp: null }), NOW).cells[4], '<unknown>');
});

test('podTable carries PartialObjectMetadata rows by default, the object or nothing on request', () => {
  const p = pod({ phase: 'Running' }, {}, { labels: { app: 'web' } });
  const t = podTable([p], NOW, { resourceVersion: '42' });
  assert.is(t.kind, 'Table');
  assert.is(t.apiVersion, 'meta.k8s.io/v1');
  assert.equal(t.metadata, { resourceVersion: '42' });
  assert.is(t.columnDefinitions.length, 9);
  const partial = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: p.metadata };
  assert.equal(t.rows[0]!.object, partial);
  assert.is(podTable([p], NOW, { includeObject: 'Object' }).rows[0]!.object, p);
  assert.not.ok('object' in podTable([p], NOW, { includeObject: 'None' }).rows[0]!);
  assert.equal(podTable([p], NOW, { noHeaders: true, continue: 'c1' }).columnDefinitions, []);
  assert.equal(podTable([], NOW, { continue: 'c1' }).metadata, { continue: 'c1' });
});

test('parseIncludeObject reads the query and rejects unknown values with 400', () => {
  assert.is(parseIncludeObject(undefined), 'Metadata');
  assert.is(parseIncludeObject(new URLSearchParams('includeObject=Object')), 'Object');
  assert.is(parseIncludeObject({ includeObject: 'None' }), 'None');
  assert.is(parseIncludeObject(''), 'Metadata');
  try {
    parseIncludeObject('Everything');
    assert.unreachable('should throw');
  } catch (e) {
    assert.ok(isStatusError(e));
    assert.is(e.code, 400);
    assert.is(e.message, 'unrecognized includeObject value: "Everything"');
  }
});

const event = (over: Partial<CoreEvent>): CoreEvent => ({
  metadata: { name: 'web.17f3', namespace: 'default' },
  involvedObject: { kind: 'Pod', name: 'web', fieldPath: 'spec.containers{app}' },
  reason: 'Pulled',
  message: '  Container image "busybox" already present on machine\n',
  type: 'Normal',
  source: { component: 'kubelet', host: 'edge-1' },
  firstTimestamp: ago(3600),
  lastTimestamp: ago(70),
  count: 3,
  ...over,
});

test('event columns: five by default, five more with -o wide', () => {
  const defs = eventColumns.map((c) => `${c.name}:${c.priority}`).join(',');
  const want =
    'Last Seen:0,Type:0,Reason:0,Object:0,Subobject:1,Source:1,Message:0,First Seen:1,Count:1,Name:1';
  assert.is(defs, want);
});

test('event row: pod/web, source with host, trimmed message, count', () => {
  const message = 'Container image "busybox" already present on machine';
  assert.equal(printEvent(event({}), NOW).cells, [
    ...['70s', 'Normal', 'Pulled', 'pod/web', 'spec.containers{app}', 'kubelet, edge-1', message],
    ...['60m', 3, 'web.17f3'],
  ]);
});

test('event row fallbacks: no lastTimestamp, no count, eventTime, reporting*, series, kind only', () => {
  const single = printEvent(
    event({ lastTimestamp: null, count: 0, source: { component: 'kubelet' } }),
    NOW,
  ).cells;
  assert.equal([single[0], single[5], single[7], single[8]], ['60m', 'kubelet', '60m', 1]);
  const modern = printEvent(
    event({
      involvedObject: { kind: 'Node' },
      firstTimestamp: null,
      lastTimestamp: null,
      count: undefined,
      source: undefined,
      eventTime: '2025-03-01T11:59:00.123456Z',
      reportingComponent: 'outpost',
      reportingInstance: 'edge-1',
      series: { count: 9, lastObservedTime: '2025-03-01T11:59:50.000000Z' },
    }),
    NOW,
  ).cells;
  assert.equal(
    [modern[0], modern[3], modern[5], modern[7], modern[8]],
    ['10s', 'node', 'outpost, edge-1', '59s', 9],
  );
});

test('eventTable and namespaceTable', () => {
  assert.is(eventTable([event({})], NOW).rows[0]!.cells.length, 10);
  const ns = {
    metadata: { name: 'default', creationTimestamp: ago(86400 * 3) },
    status: { phase: 'Active' },
  };
  const t = namespaceTable([ns], NOW);
  assert.is(t.columnDefinitions.map((c) => c.name).join(), 'Name,Status,Age');
  assert.equal(t.rows[0]!.cells, ['default', 'Active', '3d']);
});

test.run();
