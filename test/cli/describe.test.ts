// The describe formatter: pure cases with exact text, then the real kubectl against a real Outpost
// socket describing the same pods, whose output `outpost describe` must equal (ages aside).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiClient } from '#lib/cli/client.ts';
import { describe } from '#lib/cli/describe.ts';
import { describePod } from '#lib/cli/describe-pod.ts';
import { describeEvents, PrefixWriter, rfc1123z } from '#lib/cli/describe-writer.ts';
import type { CoreEvent } from '#lib/kube/printers/events.ts';
import { formatQuantity } from '#lib/kube/quantity-format.ts';
import type { Pod } from '#lib/kube/types.ts';
import { kubectl, startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { NS, richPod, terminatingPod } from './describe-fixtures.ts';

const NOW = Date.parse('2025-03-01T12:00:00Z');

const pure = suite('describe formatter');

pure('quantities print in canonical form, as Quantity.String()', () => {
  const cases: [string | number, string][] = [
    ['0.5', '500m'],
    ['500m', '500m'],
    ['2000m', '2'],
    ['1.5', '1500m'],
    [2, '2'],
    ['100', '100'],
    ['1024Mi', '1Gi'],
    ['1.5Gi', '1536Mi'],
    ['1000Mi', '1000Mi'],
    ['512', '512'],
    ['2G', '2G'],
    ['1e3', '1e3'],
    ['0', '0'],
    ['0.1m', '100u'],
    ['not a quantity', 'not a quantity'],
  ];
  for (const [input, want] of cases) assert.is(formatQuantity(input), want, String(input));
});

pure('a minimal pending pod, with no events', () => {
  const pod = {
    metadata: { name: 'tiny', namespace: 'default' },
    spec: { containers: [{ name: 'main', image: 'busybox' }] },
    status: { phase: 'Pending' },
  } as Pod;
  assert.is(
    describePod(pod, [], NOW),
    [
      'Name:         tiny',
      'Namespace:    default',
      'Node:         <none>',
      'Labels:       <none>',
      'Annotations:  <none>',
      'Status:       Pending',
      'IP:           ',
      'IPs:          <none>',
      'Containers:',
      '  main:',
      '    Image:        busybox',
      '    Port:         <none>',
      '    Host Port:    <none>',
      '    Environment:  <none>',
      '    Mounts:       <none>',
      'Volumes:          <none>',
      'QoS Class:        BestEffort',
      'Node-Selectors:   <none>',
      'Tolerations:      <none>',
      'Events:           <none>',
      '',
    ].join('\n'),
  );
  assert.not.match(describePod(pod, undefined, NOW), /Events/, '--show-events=false prints no Events line');
});

pure('events: oldest first by last occurrence, repeated ones as (xN over AGE), trimmed messages', () => {
  const ev = (reason: string, first: string, last: string, count: number, type = 'Normal'): CoreEvent => ({
    metadata: { name: reason },
    type,
    reason,
    message: `  ${reason} happened \n`,
    source: { component: reason === 'Custom' ? '' : 'kubelet' },
    reportingComponent: 'my-controller',
    firstTimestamp: first,
    lastTimestamp: last,
    count,
  });
  const w = new PrefixWriter();
  describeEvents(
    w,
    [
      ev('BackOff', '2025-03-01T11:50:00Z', '2025-03-01T11:55:00Z', 3, 'Warning'),
      ev('Pulled', '2025-03-01T11:49:00Z', '2025-03-01T11:49:00Z', 1),
      ev('Custom', '2025-03-01T09:00:00Z', '2025-03-01T11:59:58Z', 1),
    ],
    NOW,
  );
  assert.is(
    w.toString(),
    [
      'Events:',
      '  Type     Reason   Age               From           Message',
      '  ----     ------   ----              ----           -------',
      '  Normal   Pulled   11m               kubelet        Pulled happened',
      '  Warning  BackOff  5m (x3 over 10m)  kubelet        BackOff happened',
      '  Normal   Custom   3h                my-controller  Custom happened',
      '',
    ].join('\n'),
  );
});

pure('times print as Go RFC1123Z in the local zone; unset is the zero time', () => {
  const tz = process.env.TZ;
  try {
    process.env.TZ = 'Asia/Kolkata';
    assert.is(rfc1123z('2025-03-01T10:00:00Z'), 'Sat, 01 Mar 2025 15:30:00 +0530');
    process.env.TZ = 'America/New_York';
    assert.is(rfc1123z('2025-07-04T03:04:05Z'), 'Thu, 03 Jul 2025 23:04:05 -0400');
  } finally {
    if (tz === undefined) delete process.env.TZ;
    else process.env.TZ = tz;
  }
  assert.is(rfc1123z(undefined), 'Mon, 01 Jan 0001 00:00:00 +0000');
});

pure('a terminating pod shows how long it lasts and its grace period', () => {
  const pod = terminatingPod();
  pod.metadata.deletionTimestamp = '2025-03-01T11:59:30Z';
  const text = describePod(pod, undefined, NOW);
  assert.match(text, /\nStatus: {20}Terminating \(lasts 30s\)\nTermination Grace Period: {2}30s\n/);
});

pure('a set optional on a projected source prints its value (kubectl 1.32 prints a pointer address)', () => {
  const pod = {
    metadata: { name: 'p', namespace: 'default' },
    spec: {
      containers: [{ name: 'main', image: 'busybox' }],
      volumes: [{ name: 'all', projected: { sources: [{ secret: { name: 's', optional: false } }] } }],
    },
  } as unknown as Pod;
  assert.match(describePod(pod, [], NOW), /\n {4}SecretName: +s\n {4}SecretOptionalName: +false\n/);
});

pure('resourceFieldRef values: divisors round up, unset limits are node allocatable', () => {
  const pod = {
    metadata: { name: 'p', namespace: 'default' },
    spec: {
      containers: [
        {
          name: 'main',
          image: 'busybox',
          resources: { limits: { cpu: '1500m', memory: '100Mi' } },
          env: [
            { name: 'A', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
            { name: 'B', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
            { name: 'C', valueFrom: { resourceFieldRef: { resource: 'requests.cpu' } } },
            { name: 'D', valueFrom: { resourceFieldRef: { resource: 'limits.ephemeral-storage' } } },
          ],
        },
      ],
    },
  } as unknown as Pod;
  const text = describePod(pod, [], NOW);
  assert.match(text, /A: +2 \(limits\.cpu\)\n/);
  assert.match(text, /B: +100 \(limits\.memory\)\n/);
  assert.match(text, /C: +0 \(requests\.cpu\)\n/);
  assert.match(text, /D: +0 \(limits\.ephemeral-storage\)\n/);
});

pure.run();

// ---- against the real kubectl ----

/** Ages differ between two runs: replace them in Events tables and let the columns collapse. */
function normalize(text: string): string {
  let inEvents = false;
  return text
    .split('\n')
    .map((line) => {
      if (line === 'Events:') inEvents = true;
      else if (!line.startsWith(' ')) inEvents = false;
      if (!inEvents) return line;
      return line.replace(/\b(\d+[smhdy])+\b|<unknown>|<invalid>/g, 'AGE').replace(/ {2,}/g, '  ');
    })
    .join('\n');
}

const k = suite('describe against kubectl');
let agent: TestAgent;
let client: ApiClient;

k.before(async () => {
  agent = await startTestAgent({});
  const { pod, status } = richPod();
  agent.store.pods.put(pod, 'api');
  const uid = agent.store.pods.get(NS, 'rich')!.metadata.uid!;
  agent.store.pods.setStatus(uid, status);
  agent.store.pods.put(terminatingPod(), 'api');
  const record = (reason: string, message: string, type: 'Normal' | 'Warning', forUid = uid) =>
    agent.store.events.record(
      { kind: 'Pod', namespace: NS, name: 'rich', uid: forUid },
      type,
      reason,
      message,
      'kubelet',
    );
  record('Scheduled', 'Successfully assigned to edge-1', 'Normal');
  record('BackOff', 'Back-off restarting failed container sidecar  ', 'Warning');
  record('BackOff', 'Back-off restarting failed container sidecar  ', 'Warning');
  record('Other', 'an event of an earlier pod with the same name', 'Normal', 'another-uid');
  client = new ApiClient({ server: agent.url });
});

k.after(async () => {
  await client.close();
  await agent.stop();
});

async function both(args: string[], opts: { showEvents?: boolean; selector?: string } = {}) {
  const out: string[] = [];
  const err: string[] = [];
  // Positional arguments: flags and the value of -l are kubectl's business only.
  const [type, ...names] = args.filter((a, i) => !a.startsWith('-') && args[i - 1] !== '-l');
  const code = await describe(
    client,
    type!,
    names,
    { namespace: NS, allNamespaces: false, showEvents: opts.showEvents ?? true, selector: opts.selector },
    { out: (t) => out.push(t), err: (t) => err.push(t) },
  );
  const real = await kubectl(agent.url, ['describe', '-n', NS, ...args]);
  return { ours: { code, stdout: out.join(''), stderr: err.join('') }, real };
}

for (const [title, args, opts] of [
  ['one pod with every section', ['pod', 'rich'], {}],
  ['a terminating pod with no status', ['pod', 'leaving'], {}],
  ['every pod of the namespace', ['pods'], {}],
  ['a name prefix when no pod has the name', ['pod', 'ri'], {}],
  ['TYPE/NAME', ['pod/rich'], {}],
  ['--show-events=false', ['pod', 'rich', '--show-events=false'], { showEvents: false }],
  ['a label selector', ['pods', '-l', 'app=web'], { selector: 'app=web' }],
  ['one found, one missing: output, then the error, exit 1', ['pod', 'rich', 'nope'], {}],
  ['a missing pod', ['pod', 'nope'], {}],
] as [string, string[], { showEvents?: boolean; selector?: string }][]) {
  k(`outpost describe equals kubectl describe: ${title}`, async () => {
    const { ours, real } = await both(args, opts);
    assert.is(ours.code, real.code ?? -1, real.stderr);
    assert.is(ours.stderr, real.stderr);
    assert.is(normalize(ours.stdout), normalize(real.stdout));
  });
}

k('kubectl describe shows the events Outpost recorded, filtered by the pod uid', async () => {
  const r = await kubectl(agent.url, ['describe', 'pod', 'rich', '-n', NS]);
  assert.is(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /Warning {2}BackOff {4}\S+ \(x2 over \S+\) {2}kubelet {2}Back-off restarting failed container sidecar\n/,
  );
  assert.match(r.stdout, /Normal {3}Scheduled {2}\S+ +kubelet {2}Successfully assigned to edge-1\n/);
  assert.not.match(r.stdout, /earlier pod/);
});

k('more events than one page: describe follows the continue tokens to the end', async () => {
  const uid = agent.store.pods.get(NS, 'leaving')!.metadata.uid!;
  for (let i = 0; i < 1203; i++) {
    agent.store.events.record(
      { kind: 'Pod', namespace: NS, name: 'leaving', uid },
      'Warning',
      'Unhealthy',
      `probe ${i}`,
    );
  }
  const r = await kubectl(agent.url, ['describe', 'pod', 'leaving', '-n', NS]);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout.match(/ Unhealthy /g)?.length, 1203);
  const out: string[] = [];
  await describe(
    client,
    'pod',
    ['leaving'],
    { namespace: NS, allNamespaces: false, showEvents: true },
    {
      out: (t) => out.push(t),
      err: () => {},
    },
  );
  assert.is(out.join('').match(/ Unhealthy /g)?.length, 1203);
});

k.run();
