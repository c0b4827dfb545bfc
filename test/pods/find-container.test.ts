import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { CriClient } from '#lib/cri/client.ts';
import type { Container, ContainerFilter } from '#lib/cri/types.ts';
import type { Pod } from '#lib/kube/types.ts';
import { requireRuntime, resolveContainer, runningInstance } from '#lib/pods/runtime/find-container.ts';
import { assertStatus } from '../helpers/status.ts';

const pod = (containers: string[], init: string[] = [], annotations: Record<string, string> = {}): Pod => ({
  metadata: { name: 'web', namespace: 'default', uid: 'uid-1', annotations },
  spec: {
    containers: containers.map((name) => ({ name })),
    ...(init.length ? { initContainers: init.map((name) => ({ name })) } : {}),
  },
});

test('the only container, the annotated default, or a named app or init container', () => {
  assert.is(resolveContainer(pod(['main'])), 'main');
  assert.is(resolveContainer(pod(['a', 'b'], [], { 'kubectl.kubernetes.io/default-container': 'b' })), 'b');
  assert.is(resolveContainer(pod(['a', 'b']), 'a'), 'a');
  assert.is(resolveContainer(pod(['a'], ['setup']), 'setup'), 'setup');
});

test('the API server messages when the container is ambiguous or unknown', () => {
  assertStatus(
    () => resolveContainer(pod(['a', 'b'])),
    400,
    'a container name must be specified for pod web, choose one of: [a b]',
  );
  assertStatus(
    () => resolveContainer(pod(['a', 'b'], ['setup'])),
    400,
    'a container name must be specified for pod web, choose one of: [a b] or one of the init containers: [setup]',
  );
  // An annotation naming no container is ignored, as kubectl ignores it.
  assertStatus(
    () => resolveContainer(pod(['a', 'b'], [], { 'kubectl.kubernetes.io/default-container': 'zz' })),
    400,
    'a container name must be specified for pod web, choose one of: [a b]',
  );
  assertStatus(() => resolveContainer(pod(['main']), 'zz'), 400, 'container zz is not valid for pod web');
  assertStatus(
    () => requireRuntime(undefined),
    503,
    'no container runtime is configured on this node (outpost serve --runtime-endpoint)',
  );
});

const fakeCri = (containers: Container[], seen: ContainerFilter[] = []) =>
  ({
    listContainers: async (filter: ContainerFilter) => {
      seen.push(filter);
      return containers;
    },
  }) as unknown as CriClient;
const instance = (id: string, createdAt: string) => ({ id, createdAt }) as Container;

test('the newest running instance, found by the kubelet labels', async () => {
  const seen: ContainerFilter[] = [];
  const found = await runningInstance(
    fakeCri([instance('old', '100'), instance('new', '200')], seen),
    pod(['main']),
    'main',
  );
  assert.is(found.containerId, 'new');
  assert.equal(seen, [
    {
      labelSelector: { 'io.kubernetes.pod.uid': 'uid-1', 'io.kubernetes.container.name': 'main' },
      state: { state: 'CONTAINER_RUNNING' },
    },
  ]);
});

test('no running instance is a 409 naming the state the metabase knows', async () => {
  const p = pod(['main']);
  p.status = {
    containerStatuses: [
      {
        name: 'main',
        state: { waiting: { reason: 'CrashLoopBackOff' } },
        ready: false,
        restartCount: 3,
        image: '',
        imageID: '',
      },
    ],
  };
  const err = await runningInstance(fakeCri([]), p, 'main').catch((e: unknown) => e);
  assertStatus(
    () => {
      throw err;
    },
    409,
    'container main is not running in pod web (CrashLoopBackOff)',
  );
  const bare = await runningInstance(fakeCri([]), pod(['main']), 'main').catch((e: unknown) => e);
  assertStatus(
    () => {
      throw bare;
    },
    409,
    'container main is not running in pod web',
  );
});

test.run();
