// The node API's parts without a cluster: certificates, the webhook authenticator/authorizer with
// its cache and fail-closed behaviour (over a fake API server request), the app's auth and routes
// through app.request(), and stats from fake CRI figures.
import { X509Certificate } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import { type ApiError, UnreachableError } from '#lib/cloud/context.ts';
import { attributesOf, NodeAuth } from '#lib/cloud/node-auth.ts';
import { newKey, selfSignedCertificate } from '#lib/cloud/x509.ts';
import type { CriClient } from '#lib/cri/client.ts';
import type { ContainerStats } from '#lib/cri/types.ts';
import { defaultLimits } from '#lib/http/limits.ts';
import type { Pod } from '#lib/kube/types.ts';
import { silentLogger } from '#lib/log.ts';
import { createNodeApiApp } from '#lib/node-api/app.ts';
import { nodeCpuNs, nodeMemory, resourceMetrics, StatsCollector } from '#lib/pods/runtime/stats.ts';
import { createStore } from '#lib/store/index.ts';

test('self-signed serving certificate: subject, SANs, key, usage', () => {
  const { privateKey } = newKey();
  const pem = selfSignedCertificate(
    privateKey,
    { commonName: 'system:node:edge-1', organizations: ['system:nodes'] },
    { dns: ['edge-1'], ips: ['127.0.0.1', '::1'] },
    ['server auth'],
    { now: Date.parse('2026-01-01T00:00:00Z'), days: 10 },
  );
  const x = new X509Certificate(pem);
  assert.is(x.subject, 'O=system:nodes\nCN=system:node:edge-1');
  assert.is(x.subjectAltName, 'DNS:edge-1, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
  assert.ok(x.checkPrivateKey(privateKey));
  assert.ok(x.verify(x.publicKey));
  assert.is(x.validTo, 'Jan 11 00:00:00 2026 GMT');
  assert.equal(x.keyUsage, ['1.3.6.1.5.5.7.3.1']);
});

test('subresource by path and verb by method, as kubelet maps them', () => {
  assert.equal(attributesOf('GET', '/stats/summary'), { verb: 'get', subresource: 'stats' });
  assert.equal(attributesOf('GET', '/metrics/resource'), { verb: 'get', subresource: 'metrics' });
  assert.equal(attributesOf('GET', '/metrics'), { verb: 'get', subresource: 'metrics' });
  assert.equal(attributesOf('GET', '/logs/syslog'), { verb: 'get', subresource: 'log' });
  assert.equal(attributesOf('POST', '/exec/a/b/c'), { verb: 'create', subresource: 'proxy' });
  assert.equal(attributesOf('GET', '/containerLogs/a/b/c'), { verb: 'get', subresource: 'proxy' });
});

/** A fake API server for reviews: tokens map to users, `allowed` decides SARs; counts calls. */
function fakeCtx(o: { tokens?: Record<string, string>; allowed?: (user: string, sub: string) => boolean }) {
  const calls: string[] = [];
  let down = false;
  const ctx = {
    nodeName: 'edge-1',
    async request<T>(path: string, opts: { body?: unknown } = {}): Promise<T> {
      calls.push(path.split('/').pop() ?? path);
      if (down) throw new UnreachableError('no answer');
      const spec = (opts.body as { spec: Record<string, unknown> }).spec;
      if (path.endsWith('tokenreviews')) {
        const user = o.tokens?.[spec.token as string];
        return { status: user ? { authenticated: true, user: { username: user, groups: ['g'] } } : {} } as T;
      }
      const attrs = spec.resourceAttributes as { subresource: string; name: string; resource: string };
      assert.is(attrs.name, 'edge-1');
      assert.is(attrs.resource, 'nodes');
      return { status: { allowed: o.allowed?.(spec.user as string, attrs.subresource) ?? false } } as T;
    },
  };
  return { ctx, calls, setDown: (v: boolean) => (down = v) };
}

test('tokens: TokenReview once, cached; unknown tokens 401; unreachable and uncached 503', async () => {
  let now = 1_000_000;
  const f = fakeCtx({ tokens: { good: 'alice' } });
  const auth = new NodeAuth(f.ctx as never, { now: () => now });
  assert.equal(await auth.authenticateToken('good'), { username: 'alice', groups: ['g'] });
  await auth.authenticateToken('good');
  assert.is(f.calls.length, 1);
  await auth.authenticateToken('bad').then(
    () => assert.unreachable(),
    (e: ApiError & { code: number }) => assert.is(e.code, 401),
  );
  f.setDown(true);
  assert.is((await auth.authenticateToken('good')).username, 'alice'); // cached while offline
  now += 121_000;
  await auth.authenticateToken('good').then(
    () => assert.unreachable(),
    (e: { code: number }) => assert.is(e.code, 503),
  );
});

test('SubjectAccessReview per user and subresource: allowed cached 5 min, denied 30 s, fail closed', async () => {
  let now = 1_000_000;
  let allowStats = false;
  const f = fakeCtx({ allowed: (u, sub) => u === 'admin' && (sub === 'proxy' || allowStats) });
  const auth = new NodeAuth(f.ctx as never, { now: () => now });
  const admin = { username: 'admin', groups: [] };
  await auth.authorize(admin, { verb: 'get', subresource: 'proxy' });
  await auth.authorize(admin, { verb: 'get', subresource: 'proxy' });
  assert.is(f.calls.length, 1);
  const denied = await auth.authorize(admin, { verb: 'get', subresource: 'stats' }).catch((e) => e);
  assert.is(denied.code, 403);
  assert.match(denied.message, 'user=admin, verb=get, resource=nodes, subresource(s)=[stats]');
  allowStats = true;
  assert.is((await auth.authorize(admin, { verb: 'get', subresource: 'stats' }).catch((e) => e)).code, 403);
  now += 31_000;
  await auth.authorize(admin, { verb: 'get', subresource: 'stats' });
  f.setDown(true);
  await auth.authorize(admin, { verb: 'get', subresource: 'proxy' }); // cached
  const other = await auth
    .authorize({ username: 'bob', groups: [] }, { verb: 'get', subresource: 'proxy' })
    .catch((e) => e);
  assert.is(other.code, 503);
  now += 301_000;
  assert.is((await auth.authorize(admin, { verb: 'get', subresource: 'proxy' }).catch((e) => e)).code, 503);
});

const stat = (
  id: string,
  pod: string,
  container: string,
  cpuNs: number,
  atNs: number,
  ws: number,
): ContainerStats => ({
  attributes: {
    id,
    metadata: { name: container, attempt: 0 },
    labels: {
      'io.kubernetes.pod.uid': `uid-${pod}`,
      'io.kubernetes.pod.name': pod,
      'io.kubernetes.pod.namespace': 'demo',
      'io.kubernetes.container.name': container,
    },
    annotations: {},
  },
  cpu: { timestamp: String(atNs), usageCoreNanoSeconds: { value: String(cpuNs) }, usageNanoCores: null },
  memory: {
    timestamp: String(atNs),
    workingSetBytes: { value: String(ws) },
    availableBytes: null,
    usageBytes: { value: String(ws * 2) },
    rssBytes: null,
    pageFaults: null,
    majorPageFaults: null,
  },
  writableLayer: null,
});

function fakeStatsCri(samples: ContainerStats[][]): CriClient {
  let i = 0;
  return {
    listContainerStats: async () => samples[Math.min(i++, samples.length - 1)]!,
    listContainers: async () => [{ id: 'c1', createdAt: '1700000000000000000' }],
    listPodSandbox: async () => [
      { id: 's1', createdAt: '1690000000000000000', labels: { 'io.kubernetes.pod.uid': 'uid-web' } },
    ],
  } as unknown as CriClient;
}

const HOST = {
  procStat: () => 'cpu  100 0 50 1000 5 0 0 0 0 0\ncpu0 100 0 50 1000 5 0 0 0 0 0\n',
  meminfo: () => 'MemTotal:       1000 kB\nMemFree:         200 kB\nMemAvailable:    600 kB\n',
  uptimeSeconds: () => 100,
};

test('/proc readers', () => {
  assert.is(nodeCpuNs(HOST.procStat()), 150 * 10_000_000);
  assert.equal(nodeMemory(HOST.meminfo()), { total: 1_024_000, free: 204_800, available: 614_400 });
});

test('stats summary: pods from CRI stats, usageNanoCores from two samples, resource metrics', async () => {
  const t0 = 1_700_000_100_000_000_000;
  const cri = fakeStatsCri([
    [stat('c1', 'web', 'main', 1_000_000_000, t0, 5000)],
    [stat('c1', 'web', 'main', 1_500_000_000, t0 + 1_000_000_000, 6000)],
  ]);
  const stats = new StatsCollector(cri, 'edge-1', () => 1_700_000_200_000, HOST);
  const first = await stats.summary();
  assert.is(first.node.nodeName, 'edge-1');
  assert.is(first.node.memory.workingSetBytes, 1_024_000 - 614_400);
  assert.is(first.pods[0]!.containers[0]!.cpu.usageNanoCores, undefined);
  const second = await stats.summary();
  const pod = second.pods[0]!;
  assert.equal(pod.podRef, { name: 'web', namespace: 'demo', uid: 'uid-web' });
  assert.is(pod.containers[0]!.cpu.usageNanoCores, 500_000_000);
  assert.is(pod.cpu.usageCoreNanoSeconds, 1_500_000_000);
  assert.is(pod.memory.workingSetBytes, 6000);
  assert.is(pod.startTime, new Date(1_690_000_000_000).toISOString());
  const text = resourceMetrics(second);
  assert.match(
    text,
    'container_cpu_usage_seconds_total{container="main",namespace="demo",pod="web"} 1.5 1700000101000',
  );
  assert.match(text, 'pod_memory_working_set_bytes{namespace="demo",pod="web"} 6000');
  assert.match(text, '\nscrape_error 0\n');
});

function nodeApp(allowed: (user: string, sub: string) => boolean) {
  const store = createStore(openMetabase(':memory:'), { host: 'edge-1' });
  const f = fakeCtx({ tokens: { 'admin-token': 'admin', 'node-2-token': 'system:node:edge-2' }, allowed });
  const app = createNodeApiApp({
    store,
    log: silentLogger,
    now: Date.now,
    nodeName: 'edge-1',
    shutdown: new AbortController().signal,
    health: () => [],
    auth: {},
    limits: defaultLimits(Date.now),
    nodeAuth: new NodeAuth(f.ctx as never, { now: Date.now }),
    stats: undefined,
  });
  return { app, store };
}
const bearer = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });

test('node API app: anonymous 401, another identity 403, admin reaches pods, logs and health', async () => {
  const { app, store } = nodeApp((u) => u === 'admin');
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'demo', uid: 'uid-web' },
    spec: { containers: [{ name: 'main', image: 'x' }] },
  } as Pod;
  store.pods.put(pod, 'cloud');
  const anon = await app.request('/healthz');
  assert.is(anon.status, 401);
  assert.is(((await anon.json()) as { reason: string }).reason, 'Unauthorized');
  assert.is((await app.request('/healthz', bearer('nope'))).status, 401);
  assert.is((await app.request('/pods', bearer('node-2-token'))).status, 403);
  const ok = await app.request('/healthz', bearer('admin-token'));
  assert.is(await ok.text(), 'ok');
  const list = (await (await app.request('/pods', bearer('admin-token'))).json()) as {
    kind: string;
    items: Pod[];
  };
  assert.is(list.kind, 'PodList');
  assert.equal(
    list.items.map((p) => p.metadata.name),
    ['web'],
  );
  assert.is((await app.request('/containerLogs/demo/nope/main', bearer('admin-token'))).status, 404);
  assert.is((await app.request('/containerLogs/demo/web/other', bearer('admin-token'))).status, 400);
  assert.is(
    (await app.request('/containerLogs/demo/web/main?tailLines=x', bearer('admin-token'))).status,
    400,
  );
  // No runtime here: 503 Status, not a 500.
  assert.is((await app.request('/containerLogs/demo/web/main', bearer('admin-token'))).status, 503);
  assert.is(
    (await app.request('/exec/demo/web/wrong-uid/main?command=ls', bearer('admin-token'))).status,
    404,
  );
  assert.is((await app.request('/exec/demo/web/main', bearer('admin-token'))).status, 400);
  assert.is((await app.request('/stats/summary', bearer('admin-token'))).status, 503);
  assert.is((await app.request('/nope', bearer('admin-token'))).status, 404);
});

test.run();
