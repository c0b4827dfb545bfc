// /metrics through app.request(): every series the agent reports, fed the way the agent feeds them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import { createApp } from '#lib/app.ts';
import { ManualClock, settle } from '#lib/clock.ts';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import { silentLogger } from '#lib/log.ts';
import { createMetrics, timeMetabaseWrites } from '#lib/metrics.ts';
import { createStore } from '#lib/store/index.ts';
import { Supervisor } from '#lib/supervisor/modules.ts';
import { testApp } from '../helpers/app.ts';

function setup() {
  const mb = openMetabase(':memory:');
  const store = createStore(mb, { host: 'edge-1' });
  const clock = new ManualClock(1_000_000);
  const supervisor = new Supervisor({ log: silentLogger, clock, onFatal: () => {} });
  const metrics = createMetrics({ pods: () => store.pods.list().items, process: false });
  supervisor.on('change', (m) => metrics.module(m));
  timeMetabaseWrites(mb.sqlite, (s) => metrics.metabaseWrite(s));
  const app = createApp({
    store,
    log: silentLogger,
    now: () => clock.now(),
    nodeName: 'edge-1',
    shutdown: new AbortController().signal,
    health: () => supervisor.snapshot(),
    metrics,
  });
  const scrape = async () => {
    const res = await app.request('/metrics');
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return res.text();
  };
  return { store, clock, supervisor, metrics, app, scrape };
}

const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { nodeName: 'edge-1', containers: [{ name: 'main', image: 'busybox' }] },
});

test('HTTP requests are counted by method, route pattern and code, never by raw URL', async () => {
  const s = setup();
  s.store.pods.put(pod('web'), 'api');
  assert.is((await s.app.request('/api/v1/namespaces/default/pods/web')).status, 200);
  assert.is((await s.app.request('/api/v1/namespaces/default/pods/nope')).status, 404);
  assert.is((await s.app.request('/api/v1/namespaces/kube-system/pods/nope')).status, 404);
  assert.is((await s.app.request('/no/such/path')).status, 404);
  const text = await s.scrape();
  const route = '/api/v1/namespaces/:ns/pods/:name';
  assert.match(text, `outpost_http_requests_total{method="GET",route="${route}",code="200"} 1\n`);
  assert.match(text, `outpost_http_requests_total{method="GET",route="${route}",code="404"} 2\n`);
  assert.match(text, 'outpost_http_requests_total{method="GET",route="unmatched",code="404"} 1\n');
  assert.match(
    text,
    `outpost_http_request_duration_seconds_count{method="GET",route="${route}",code="404"} 2\n`,
  );
  assert.not.match(text, 'kube-system');
  assert.not.match(text, '/no/such/path');
});

test('module state (one-hot) and restarts follow the supervisor', async () => {
  const s = setup();
  let fail = true;
  s.supervisor.register({
    name: 'flaky',
    policy: 'Always',
    run: async (ctx) => {
      if (fail) throw new Error('not yet');
      ctx.ready();
      await new Promise((r) => ctx.signal.addEventListener('abort', r));
    },
  });
  s.supervisor.start();
  await settle();
  let text = await s.scrape();
  assert.match(text, 'outpost_module_state{module="flaky",state="backoff"} 1\n');
  assert.match(text, 'outpost_module_state{module="flaky",state="running"} 0\n');
  assert.match(text, 'outpost_module_restarts_total{module="flaky"} 0\n');
  fail = false;
  await s.clock.advanceAsync(1000);
  text = await s.scrape();
  assert.match(text, 'outpost_module_state{module="flaky",state="running"} 1\n');
  assert.match(text, 'outpost_module_state{module="flaky",state="backoff"} 0\n');
  assert.match(text, 'outpost_module_restarts_total{module="flaky"} 1\n');
  await s.supervisor.stop();
});

test('pods by phase and container restarts come from the metabase at scrape time', async () => {
  const s = setup();
  for (const name of ['a', 'b', 'c']) s.store.pods.put(pod(name), 'api');
  const uid = (n: string) => s.store.pods.record('default', n)!.uid;
  const running = (restarts: number) => ({
    phase: 'Running' as const,
    containerStatuses: [
      { name: 'main', ready: true, restartCount: restarts, image: 'busybox', imageID: '', state: {} },
    ],
  });
  s.store.pods.setStatus(uid('a'), running(3));
  s.store.pods.setStatus(uid('b'), running(0));
  const text = await s.scrape();
  assert.match(text, 'outpost_pods{phase="Running"} 2\n');
  assert.match(text, 'outpost_pods{phase="Pending"} 1\n');
  assert.match(text, 'outpost_pods{phase="Failed"} 0\n');
  assert.match(
    text,
    'outpost_pod_container_restarts_total{namespace="default",pod="a",container="main"} 3\n',
  );
  assert.match(
    text,
    'outpost_pod_container_restarts_total{namespace="default",pod="b",container="main"} 0\n',
  );
  // The metabase writes above were timed: each put and each status is one transaction.
  assert.match(text, /outpost_metabase_write_duration_seconds_count [5-9]\n/);
});

test('metabase write timing counts outer transactions once, nested savepoints not again', () => {
  const mb = openMetabase(':memory:');
  let n = 0;
  timeMetabaseWrites(mb.sqlite, () => n++);
  const store = createStore(mb, { host: 'edge-1' });
  mb.sqlite.transaction(() => {
    store.pods.put(pod('x'), 'api');
    store.pods.put(pod('y'), 'api');
  })();
  assert.is(n, 1);
  store.pods.put(pod('z'), 'api');
  assert.is(n, 2);
  assert.throws(() =>
    mb.sqlite.transaction(() => {
      throw new Error('rolled back');
    })(),
  );
  assert.is(n, 3, 'a rolled back write is timed too');
  mb.close();
});

test('CRI calls report their latency and gRPC status through onCall', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-cri-metrics-'));
  const notASocket = join(dir, 'sock');
  writeFileSync(notASocket, '');
  const s = setup();
  const cri = new CriClient({
    endpoint: `unix://${notASocket}`,
    onCall: (method, code, seconds) => s.metrics.cri(method, code, seconds),
  });
  try {
    await cri.version().then(
      () => assert.unreachable('a regular file answered gRPC'),
      () => {},
    );
  } finally {
    cri.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const text = await s.scrape();
  assert.match(text, 'outpost_cri_call_errors_total{method="Version",code="UNAVAILABLE"} 1\n');
  assert.match(text, 'outpost_cri_call_duration_seconds_count{method="Version",code="UNAVAILABLE"} 1\n');
});

test('without metrics in deps /metrics answers 503 and nothing is counted', async () => {
  const { app } = testApp();
  const res = await app.request('/metrics');
  assert.is(res.status, 503);
  assert.is(((await res.json()) as { reason: string }).reason, 'ServiceUnavailable');
});

test.run();
