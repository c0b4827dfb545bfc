// GET .../pods/{name}/log through app.request() over a fake runtime: container choice, query
// validation, instance choice (current, previous), the log-path guard and the Status answers.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import { createApp } from '#lib/app.ts';
import type { CriClient } from '#lib/cri/client.ts';
import type { Container, ContainerStatus } from '#lib/cri/types.ts';
import type { Status } from '#lib/kube/status.ts';
import { unavailable } from '#lib/kube/status.ts';
import type { Pod, PodStatus } from '#lib/kube/types.ts';
import { silentLogger } from '#lib/log.ts';
import { createStore } from '#lib/store/index.ts';

const root = mkdtempSync(join(tmpdir(), 'outpost-log-route-'));
const NOW = Date.parse('2026-03-01T10:00:10Z');
const store = createStore(openMetabase(':memory:'), { host: 'edge-1', now: () => NOW });

const pod = (name: string, containers: string[], extra: Partial<Pod['metadata']> = {}, init: string[] = []) =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, ...extra },
    spec: {
      containers: containers.map((c) => ({ name: c, image: 'x' })),
      ...(init.length ? { initContainers: init.map((c) => ({ name: c, image: 'x' })) } : {}),
    },
  }) as Pod;
store.pods.put(pod('one', ['main']), 'api');
store.pods.put(pod('two', ['a', 'b'], {}, ['setup']), 'api');
store.pods.put(
  pod('picked', ['a', 'b'], { annotations: { 'kubectl.kubernetes.io/default-container': 'b' } }),
  'api',
);

/** A runtime instance of a container with its log written under the pod's log directory. */
interface Instance {
  id: string;
  pod: string;
  container: string;
  created: number;
  state: Container['state'];
  lines?: string[];
  logPath?: string;
}
let instances: Instance[] = [];
let down = false;
const logPathOf = (i: Instance) =>
  i.logPath ?? join(root, 'logs', `default_${i.pod}_uid-${i.pod}`, i.container, `${i.created}.log`);
function add(i: Instance) {
  instances.push(i);
  const path = logPathOf(i);
  if (i.lines && !i.logPath) {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, i.lines.map((l) => `2026-03-01T10:00:0${i.created}Z stdout F ${l}\n`).join(''));
  }
}
const cri = {
  endpoint: 'unix:///run/fake.sock',
  async listContainers(f: { labelSelector: Record<string, string> }) {
    if (down) throw unavailable('container runtime at unix:///run/fake.sock is unavailable: connect ENOENT');
    return instances
      .filter(
        (i) =>
          `uid-${i.pod}` === f.labelSelector['io.kubernetes.pod.uid'] &&
          i.container === f.labelSelector['io.kubernetes.container.name'],
      )
      .map((i) => ({ id: i.id, createdAt: String(i.created), state: i.state }) as Container);
  },
  async containerStatus(id: string) {
    const i = instances.find((x) => x.id === id)!;
    return { id, state: i.state, logPath: logPathOf(i) } as ContainerStatus;
  },
} as unknown as CriClient;

const deps = {
  store,
  log: silentLogger,
  now: () => NOW,
  nodeName: 'edge-1',
  shutdown: new AbortController().signal,
  health: () => [],
};
const app = createApp({ ...deps, cri });

async function get(path: string, a = app) {
  const res = await a.request(path);
  const text = await res.text();
  return { code: res.status, type: res.headers.get('content-type'), text };
}
async function status(path: string, a = app): Promise<Status> {
  const r = await get(path, a);
  assert.is(r.type, 'application/json', r.text);
  return JSON.parse(r.text) as Status;
}
const log = (name: string, q = '') => `/api/v1/namespaces/default/pods/${name}/log${q}`;

test.before.each(() => {
  instances = [];
  down = false;
});

test('the only container, raw text/plain; the alias answers the same', async () => {
  add({
    id: 'c1',
    pod: 'one',
    container: 'main',
    created: 1,
    state: 'CONTAINER_RUNNING',
    lines: ['hi', 'there'],
  });
  const r = await get(log('one'));
  assert.equal([r.code, r.type, r.text], [200, 'text/plain', 'hi\nthere\n']);
  assert.is((await get('/pods/default/one/logs?tailLines=1')).text, 'there\n');
});

test('several containers: the annotated default, else a 400 naming them all (init first)', async () => {
  add({ id: 'b1', pod: 'picked', container: 'b', created: 1, state: 'CONTAINER_RUNNING', lines: ['from b'] });
  assert.is((await get(log('picked'))).text, 'from b\n');
  const s = await status(log('two'));
  assert.equal(
    [s.code, s.reason, s.message],
    [400, 'BadRequest', 'a container name must be specified for pod two, choose one of: [setup a b]'],
  );
});

test('unknown pod 404, unknown container 400, bad query values 400', async () => {
  assert.is((await status(log('nope'))).message, 'pods "nope" not found');
  assert.is((await status(log('one', '?container=side'))).message, 'container side is not valid for pod one');
  const cases: [string, string][] = [
    ['?tailLines=abc', 'invalid query: tailLines: must be an integer'],
    ['?tailLines=-1', 'invalid query: tailLines: must be greater than or equal to 0'],
    ['?limitBytes=0', 'invalid query: limitBytes: must be greater than 0'],
    ['?sinceTime=yesterday', 'invalid query: sinceTime: must be an RFC 3339 time, e.g. 2006-01-02T15:04:05Z'],
    [
      '?sinceSeconds=5&sinceTime=2026-03-01T10:00:00Z',
      'invalid query: sinceSeconds: at most one of `sinceTime` or `sinceSeconds` may be specified',
    ],
  ];
  for (const [q, message] of cases) {
    const s = await status(log('one', q));
    assert.equal([s.code, s.message], [400, message], q);
  }
});

test('previous: the instance before the current one, else a 400', async () => {
  add({
    id: 'old',
    pod: 'one',
    container: 'main',
    created: 1,
    state: 'CONTAINER_EXITED',
    lines: ['first run'],
  });
  add({
    id: 'new',
    pod: 'one',
    container: 'main',
    created: 2,
    state: 'CONTAINER_RUNNING',
    lines: ['second run'],
  });
  assert.is((await get(log('one', '?previous=true'))).text, 'first run\n');
  assert.is((await get(log('one', '?previous=false'))).text, 'second run\n');
  instances = instances.filter((i) => i.id === 'new');
  const s = await status(log('one', '?previous=true'));
  assert.equal([s.code, s.message], [400, 'previous terminated container "main" in pod "one" not found']);
});

test('previous during a pending restart is the last run, as kubelet reads lastState', async () => {
  add({ id: 'r1', pod: 'one', container: 'main', created: 1, state: 'CONTAINER_EXITED', lines: ['run 1'] });
  add({ id: 'r2', pod: 'one', container: 'main', created: 2, state: 'CONTAINER_EXITED', lines: ['run 2'] });
  const rec = store.pods.record('default', 'one')!;
  const crashLoop: PodStatus = {
    containerStatuses: [
      {
        name: 'main',
        ready: false,
        restartCount: 1,
        image: 'x',
        imageID: '',
        containerID: 'containerd://r2',
        state: { waiting: { reason: 'CrashLoopBackOff' } },
        lastState: { terminated: { exitCode: 1, containerID: 'containerd://r2' } },
      },
    ],
  };
  store.pods.setStatus(rec.uid, crashLoop);
  assert.is((await get(log('one', '?previous=1'))).text, 'run 2\n');
  assert.is((await get(log('one'))).text, 'run 2\n');
  store.pods.setStatus(rec.uid, {});
});

test('sinceSeconds counts back from the clock, timestamps prefix each line', async () => {
  add({ id: 's1', pod: 'one', container: 'main', created: 5, state: 'CONTAINER_EXITED', lines: ['a'] });
  assert.is((await get(log('one', '?sinceSeconds=5&timestamps=true'))).text, '2026-03-01T10:00:05Z a\n');
  assert.is((await get(log('one', '?sinceSeconds=4'))).text, '');
});

test('no instance yet: kubelet’s waiting message; a log path outside the pod directory: 500', async () => {
  const s = await status(log('one'));
  assert.equal([s.code, s.message], [400, 'container "main" in pod "one" is waiting to start - no logs yet']);
  const outside = join(root, 'elsewhere', 'main', '0.log');
  mkdirSync(join(outside, '..'), { recursive: true });
  writeFileSync(outside, '2026-03-01T10:00:00Z stdout F secret\n');
  add({ id: 'x', pod: 'one', container: 'main', created: 1, state: 'CONTAINER_RUNNING', logPath: outside });
  const e = await status(log('one'));
  assert.is(e.code, 500);
  assert.not.match(e.message, /secret/);
});

test('runtime down or not configured: 503 naming the runtime', async () => {
  down = true;
  const s = await status(log('one'));
  assert.equal([s.code, s.reason], [503, 'ServiceUnavailable']);
  assert.match(s.message, 'unix:///run/fake.sock');
  const none = await status(log('one'), createApp(deps));
  assert.equal([none.code, none.message], [503, 'no container runtime is configured on this node']);
});

test.after(() => rmSync(root, { recursive: true, force: true }));
test.run();
