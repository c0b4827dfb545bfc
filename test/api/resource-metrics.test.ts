// metrics.k8s.io through app.request, over a stats source shaped as the CRI collector's summary.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { StatsCollector, Summary } from '#lib/pods/runtime/stats.ts';
import { testApp } from '../helpers/app.ts';

const time = '2026-01-01T00:00:00.000Z';
const summary: Summary = {
  node: {
    nodeName: 'edge-1',
    startTime: time,
    cpu: { time, usageCoreNanoSeconds: 1, usageNanoCores: 250_000_000 },
    memory: { time, workingSetBytes: 512 * 1024 * 1024 },
    systemContainers: [],
  },
  pods: [
    {
      podRef: { name: 'web', namespace: 'default', uid: 'u1' },
      containers: [
        {
          name: 'main',
          cpu: { time, usageCoreNanoSeconds: 1, usageNanoCores: 5_000_000 },
          memory: { time, workingSetBytes: 2048 * 1024 },
        },
      ],
      cpu: { time, usageCoreNanoSeconds: 1, usageNanoCores: 5_000_000 },
      memory: { time, workingSetBytes: 2048 * 1024 },
    },
  ],
};

test('NodeMetrics and PodMetrics as kubectl top reads them; 503 without a runtime', async () => {
  const stats = { summary: async () => summary } as unknown as StatsCollector;
  const { app, store } = testApp({ stats });
  store.pods.put(
    {
      metadata: { name: 'web', namespace: 'default' },
      spec: { nodeName: 'edge-1', containers: [{ name: 'main', image: 'x' }] },
    },
    'api',
  );
  const groups = (await (await app.request('/apis')).json()) as { groups: { name: string }[] };
  assert.ok(groups.groups.some((g) => g.name === 'metrics.k8s.io'));
  const nodes = (await (await app.request('/apis/metrics.k8s.io/v1beta1/nodes')).json()) as {
    kind: string;
    items: { usage: Record<string, string> }[];
  };
  assert.is(nodes.kind, 'NodeMetricsList');
  assert.equal(nodes.items[0]!.usage, { cpu: '250000000n', memory: '524288Ki' });
  const pods = (await (await app.request('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods')).json()) as {
    items: { metadata: { name: string }; containers: { name: string; usage: Record<string, string> }[] }[];
  };
  assert.is(pods.items[0]!.metadata.name, 'web');
  assert.equal(pods.items[0]!.containers[0]!.usage, { cpu: '5000000n', memory: '2048Ki' });
  assert.is((await app.request('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope')).status, 404);
  const { app: bare } = testApp();
  assert.is((await bare.request('/apis/metrics.k8s.io/v1beta1/nodes')).status, 503);
});

test.run();
