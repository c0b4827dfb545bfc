import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ContainerStatus, Pod } from '#lib/kube/types.ts';
import { podPhase } from '#lib/pods/runtime/status.ts';

const pod = (restartPolicy: 'Always' | 'OnFailure' | 'Never'): Pod =>
  ({
    metadata: { name: 'p', namespace: 'default' },
    spec: { restartPolicy, containers: [{ name: 'a' }, { name: 'b' }] },
  }) as Pod;
const exited = (name: string, exitCode: number): ContainerStatus =>
  ({
    name,
    ready: false,
    restartCount: 0,
    image: '',
    imageID: '',
    state: { terminated: { exitCode } },
  }) as ContainerStatus;

test('restartPolicy Always: stopped containers are Running (they restart) until the pod is removed', () => {
  const app = [exited('a', 0), exited('b', 137)];
  assert.is(podPhase(pod('Always'), [], app), 'Running');
  assert.is(podPhase(pod('Always'), [], app, true), 'Failed');
  assert.is(podPhase(pod('Always'), [], [exited('a', 0), exited('b', 0)], true), 'Succeeded');
});

test('a removed pod whose containers still run, or never started, keeps its phase', () => {
  const running = { ...exited('b', 0), state: { running: { startedAt: '2026-01-01T00:00:00Z' } } };
  assert.is(podPhase(pod('Always'), [], [exited('a', 0), running], true), 'Running');
  const waiting = { ...exited('b', 0), state: { waiting: { reason: 'ContainerCreating' } } };
  assert.is(podPhase(pod('Never'), [], [waiting, exited('a', 1)], true), 'Pending');
});

test('OnFailure and Never are unchanged by removal when terminal already', () => {
  assert.is(podPhase(pod('Never'), [], [exited('a', 0), exited('b', 1)], true), 'Failed');
  assert.is(podPhase(pod('OnFailure'), [], [exited('a', 0), exited('b', 0)], true), 'Succeeded');
  assert.is(podPhase(pod('OnFailure'), [], [exited('a', 0), exited('b', 1)]), 'Running');
  assert.is(podPhase(pod('OnFailure'), [], [exited('a', 0), exited('b', 1)], true), 'Failed');
});

test.run();
