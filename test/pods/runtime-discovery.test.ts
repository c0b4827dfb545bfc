// Finding a runtime that appears later: the candidates (the configured socket, and on the default
// endpoint the usual ones and the lab's) are polled until one answers.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ManualClock } from '#lib/clock.ts';
import { DEFAULT_RUNTIME_ENDPOINT, RuntimeFinder, runtimeCandidates } from '#lib/pods/runtime/discovery.ts';
import { isRuntimeUnreachable } from '#lib/pods/runtime/module.ts';

test('a configured endpoint is the only candidate', () => {
  assert.equal(runtimeCandidates('unix:///srv/cri.sock', {}), ['unix:///srv/cri.sock']);
});

test('the default endpoint also watches CRI-O, k3s and the lab', () => {
  const c = runtimeCandidates(
    DEFAULT_RUNTIME_ENDPOINT,
    { OUTPOST_LAB_DIR: '/srv/lab' },
    '/opt/o/dist/outpost.mjs',
  );
  assert.is(c[0], DEFAULT_RUNTIME_ENDPOINT);
  for (const e of [
    'unix:///run/crio/crio.sock',
    'unix:///run/k3s/containerd/containerd.sock',
    'unix:///srv/lab/containerd.sock',
    `unix://${resolve('.lab/lab/containerd.sock')}`,
    'unix:///opt/o/.lab/lab/containerd.sock',
  ])
    assert.ok(c.includes(e), e);
  assert.is(new Set(c).size, c.length, 'no duplicates');
});

test('polls every second; only existing sockets are asked; the first that answers is found once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-finder-'));
  try {
    const clock = new ManualClock(0);
    const [a, b] = [join(dir, 'a.sock'), join(dir, 'b.sock')];
    const asked: string[] = [];
    const found: string[] = [];
    let bAnswers = false;
    const finder = new RuntimeFinder({
      candidates: [`unix://${a}`, `unix://${b}`],
      clock,
      answers: async (e) => {
        asked.push(e);
        return e.endsWith('b.sock') && bAnswers;
      },
      found: (e) => found.push(e),
    });
    finder.start();
    await clock.advanceAsync(3_000);
    assert.equal(asked, [], 'no socket exists: nothing is dialled');
    writeFileSync(b, '');
    await clock.advanceAsync(1_000);
    assert.equal(asked, [`unix://${b}`]);
    assert.equal(found, []);
    bAnswers = true;
    await clock.advanceAsync(1_000);
    assert.equal(found, [`unix://${b}`]);
    await clock.advanceAsync(10_000);
    assert.is(found.length, 1, 'stops after finding one');
    finder.stop();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a closed finder stays stopped: start() after close() (a module failing as the agent stops) polls nothing', async () => {
  const clock = new ManualClock(0);
  const asked: string[] = [];
  const finder = new RuntimeFinder({
    candidates: ['tcp://127.0.0.1:1'], // not a unix socket: always asked
    clock,
    answers: async (e) => {
      asked.push(e);
      return false;
    },
    found: () => {},
  });
  finder.start();
  await clock.advanceAsync(1_000);
  assert.ok(asked.length > 0, 'polls while started');
  finder.close();
  const before = asked.length;
  finder.start();
  await clock.advanceAsync(5_000);
  assert.is(asked.length, before, 'nothing asked after close');
  assert.is(clock.pending, 0, 'no timer left');
});

test('unreachable-runtime errors are recognised (logged quietly by the supervisor)', () => {
  assert.ok(
    isRuntimeUnreachable(new Error('container runtime at unix:///x is unavailable: connect ENOENT /x')),
  );
  assert.ok(isRuntimeUnreachable(Object.assign(new Error('x'), { code: 503 })));
  assert.not.ok(isRuntimeUnreachable(new Error('disk full')));
});

test.run();
