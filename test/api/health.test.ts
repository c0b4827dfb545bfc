// The motivating case without a runtime at all: Outpost started before containerd's socket exists
// serves the metabase's pods at once, says on each pod that the runtime is unreachable, and shows
// the runtime module backing off in /readyz?verbose, `outpost status` and /metrics.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import { status } from '#lib/cli/status.ts';
import type { Pod } from '#lib/kube/types.ts';
import { RUNTIME_REACHABLE } from '#lib/pods/runtime/reachability.ts';
import { createStore } from '#lib/store/index.ts';
import { freePort } from '../../scripts/free-port.ts';
import { startTestAgent } from '../helpers/agent.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'outpost-health-'));
const socket = join(dataDir, 'containerd.sock'); // nothing listens here
// The metabase as a previous run left it: a pod that was running.
{
  const mb = openMetabase(dataDir);
  const store = createStore(mb, { host: 'edge-1' });
  const web: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default' },
    spec: { nodeName: 'edge-1', containers: [{ name: 'main', image: 'busybox' }] },
  };
  store.pods.put(web, 'manifest');
  store.pods.setStatus(store.pods.record('default', 'web')!.uid, {
    phase: 'Running',
    qosClass: 'BestEffort',
    conditions: [{ type: 'Ready', status: 'True' }],
  });
  mb.close();
}

const agent = await startTestAgent({ dataDir, runtimeEndpoint: `unix://${socket}`, nodeName: 'edge-1' });
const get = (path: string) => fetch(agent.url + path);

/** Polls until `fn` returns something truthy; fails (instead of hanging) after 20 s. */
async function until<T>(fn: () => Promise<T> | T, what: string): Promise<NonNullable<T>> {
  for (const end = Date.now() + 20_000; Date.now() < end; await new Promise((r) => setTimeout(r, 25))) {
    const v = await fn();
    if (v) return v;
  }
  throw new Error(`never saw: ${what}`);
}

test('the first read is served from the metabase, the last known status included', async () => {
  const res = await get('/api/v1/namespaces/default/pods/web');
  assert.is(res.status, 200);
  const pod = (await res.json()) as Pod;
  assert.is(pod.metadata.name, 'web');
  assert.is(pod.status?.phase, 'Running');
});

test('the pod says the runtime is unreachable, naming the endpoint', async () => {
  const cond = await until(async () => {
    const pod = (await (await get('/api/v1/namespaces/default/pods/web')).json()) as Pod;
    return pod.status?.conditions?.find((c) => c.type === RUNTIME_REACHABLE);
  }, 'the RuntimeReachable condition');
  assert.is(cond.status, 'False');
  assert.is(cond.reason, 'RuntimeUnavailable');
  assert.ok(cond.message?.includes(`unix://${socket}`), cond.message);
  const ready = (await (await get('/api/v1/namespaces/default/pods/web')).json()) as Pod;
  assert.ok(
    ready.status?.conditions?.some((c) => c.type === 'Ready'),
    'the stored conditions are kept',
  );
});

test('/readyz?verbose lists the runtime module backing off with its error and next retry', async () => {
  const body = await until(async () => {
    const text = await (await get('/readyz?verbose')).text();
    return /\[-\]runtime failed: backoff, restarts \d+/.test(text) ? text : undefined;
  }, 'runtime in backoff');
  assert.match(body, /\[\+\]api ok\n/);
  assert.match(body, /\[\+\]metabase ok\n/);
  assert.match(body, /last error: container runtime at unix:\/\/\S+ is unavailable: connect ENOENT/);
  assert.match(body, /next retry in \d+(ms|s)/);
  assert.match(body, /readyz check failed\n$/);
  const plain = await get('/readyz');
  assert.is(plain.status, 500);
  assert.match(await plain.text(), /\[-\]runtime failed: reason withheld/);
  // Backing off is handled, not dead: liveness does not ask for a restart of the process.
  const live = await get('/livez');
  assert.is(live.status, 200);
  assert.is(await live.text(), 'ok');
});

test('outpost status prints the verbose readiness and exits 1; unreachable server exits 1 too', async () => {
  let out = '';
  const code = await status({ server: agent.url }, (s) => {
    out += s;
  });
  assert.is(code, 1);
  assert.match(out, /\[-\]runtime failed: /);
  let err = '';
  const closed = await freePort();
  const refused = await status(
    { server: `http://127.0.0.1:${closed}` },
    () => {},
    (s) => {
      err += s;
    },
  );
  assert.is(refused, 1);
  assert.match(err, new RegExp(`The connection to the server 127\\.0\\.0\\.1:${closed} was refused`));
});

test('/metrics: the runtime module is in backoff and has restarted', async () => {
  await until(
    () => agent.supervisor.snapshot().find((m) => m.name === 'runtime')!.restarts >= 1,
    'a runtime restart',
  );
  const text = await until(async () => {
    const t = await (await get('/metrics')).text();
    return /outpost_module_state\{module="runtime",state="backoff"\} 1/.test(t) ? t : undefined;
  }, 'runtime backoff in /metrics');
  assert.match(text, /outpost_module_restarts_total\{module="runtime"\} [1-9]/);
  assert.match(text, /outpost_module_state\{module="api",state="running"\} 1/);
});

test('metrics belong to one agent: a second agent in this process starts from zero', async () => {
  const other = await startTestAgent({ nodeName: 'edge-2' });
  try {
    const t = await (await fetch(`${other.url}/metrics`)).text();
    assert.not.match(t, /^outpost_cri_call\S*\{/m, 'the other agent has no runtime');
    assert.not.match(t, /route="\/readyz"/, 'nor the requests made to the first one');
    assert.match(t, /outpost_pods\{phase="Pending"\} 0/);
  } finally {
    await other.stop();
  }
});

test.after(async () => {
  await agent.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test.run();
