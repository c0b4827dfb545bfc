import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { CriClient } from '#lib/cri/client.ts';
import type { Image } from '#lib/cri/types.ts';
import { internal, notFound } from '#lib/kube/status.ts';
import { ImageError, ImagePuller, type ImagePullMode } from '#lib/pods/worker/images.ts';

// A fake runtime in a unit test only; the e2e suite (test/e2e/offline-images.test.ts) runs it on containerd.
const REFUSED =
  'PullImage: UNKNOWN: failed to pull and unpack image "127.0.0.1:1/busybox:latest": failed to resolve reference "127.0.0.1:1/busybox:latest": failed to do request: Head "http://127.0.0.1:1/v2/busybox/manifests/latest": dial tcp 127.0.0.1:1: connect: connection refused';
const local: Image = {
  id: 'sha256:e7db4ce06cf06b72a071f49579870ac277f442d989b134ff7b7c4d5f729c1392',
  repoTags: ['127.0.0.1:1/busybox:latest'],
  repoDigests: [],
  size: '2130643',
  uid: null,
  username: '',
  spec: null,
  pinned: false,
};

function setup(o: { mode?: ImagePullMode; pullError: Error; present: boolean }) {
  const pulls: string[] = [];
  const cri = {
    pullImage: async (image: string) => {
      pulls.push(image);
      throw o.pullError;
    },
    imageStatus: async () => (o.present ? local : null),
  } as unknown as CriClient;
  let now = 0;
  const puller = new ImagePuller(cri, () => now, 60_000, o.mode);
  const events: string[] = [];
  const ensure = () =>
    puller.ensure(
      { name: 'main', image: '127.0.0.1:1/busybox:latest', imagePullPolicy: 'Always' },
      (type, reason, message) => events.push(`${type} ${reason} ${message}`),
    );
  return { ensure, events, pulls, advance: (ms: number) => (now += ms) };
}

test('an unreachable registry with the image present starts from it, with PullFallback naming the digest', async () => {
  const s = setup({ pullError: internal(REFUSED), present: true });
  assert.is(await s.ensure(), local.id);
  const fallback = s.events.find((e) => e.startsWith('Warning PullFallback'));
  assert.ok(fallback?.includes(local.id), s.events.join('\n'));
  assert.ok(fallback?.includes('connection refused'));
  // Within the pull backoff the registry is not asked again, the local image serves.
  assert.is(await s.ensure(), local.id);
  assert.is(s.pulls.length, 1);
  s.advance(11_000);
  await s.ensure();
  assert.is(s.pulls.length, 2);
});

test('strict keeps kubelet: ErrImagePull, then ImagePullBackOff', async () => {
  const s = setup({ mode: 'strict', pullError: internal(REFUSED), present: true });
  const first = await s.ensure().catch((e: unknown) => e);
  assert.instance(first, ImageError);
  assert.is((first as ImageError).reason, 'ErrImagePull');
  const second = await s.ensure().catch((e: unknown) => e);
  assert.is((second as ImageError).reason, 'ImagePullBackOff');
  assert.not.ok(s.events.some((e) => e.includes('PullFallback')));
});

test('an answer of the registry (not found) fails even with the image present', async () => {
  const s = setup({ pullError: notFound('images', '127.0.0.1:1/busybox:latest'), present: true });
  const err = await s.ensure().catch((e: unknown) => e);
  assert.is((err as ImageError).reason, 'ErrImagePull');
});

test('an unreachable registry without the image fails with the cause', async () => {
  const s = setup({ pullError: internal(REFUSED), present: false });
  const err = await s.ensure().catch((e: unknown) => e);
  assert.is((err as ImageError).reason, 'ErrImagePull');
  assert.match((err as ImageError).message, /connection refused/);
});

test('presence checks: one ImageStatus for callers asking at once, a check started early is used by ensure', async () => {
  let calls = 0;
  let answer: (i: Image | null) => void = () => {};
  const cri = {
    imageStatus: () => {
      calls++;
      return new Promise<Image | null>((r) => (answer = r));
    },
  } as unknown as CriClient;
  const puller = new ImagePuller(cri, () => 0);
  const c = { name: 'main', image: 'busybox:1.36' };
  const events: string[] = [];
  const ev = (_t: string, reason: string) => void events.push(reason);
  // Pull policy Always and invalid names ask nothing ahead.
  assert.is(puller.check({ ...c, imagePullPolicy: 'Always' }), undefined);
  assert.is(puller.check({ ...c, image: 'a b' }), undefined);
  const early = puller.check(c)!;
  const both = Promise.all([puller.ensure(c, ev, early), puller.ensure(c, ev)]);
  answer(local);
  assert.equal(await both, [local.id, local.id]);
  assert.is(calls, 1);
  assert.equal(events, ['Pulled', 'Pulled']);
  // Settled: the next caller asks the runtime again (an image can go).
  const later = puller.ensure(c, ev);
  answer(null);
  const err = await later.catch((e: unknown) => e);
  assert.is(calls, 2);
  assert.instance(err, Error); // absent: a pull follows, which this fake runtime cannot do
});

test('a pull past its deadline is cancelled in the runtime, and fails as a timeout', async () => {
  let cancelled = false;
  const cri = {
    // A pull that never ends on its own, as one stalled on a registry: only its signal ends it.
    // (Its timer stands for the gRPC call's socket, which keeps a real process alive meanwhile.)
    pullImage: (_image: string, o: { signal?: AbortSignal }) =>
      new Promise((_, reject) => {
        const call = setTimeout(() => {}, 10_000);
        o.signal?.addEventListener('abort', () => {
          clearTimeout(call);
          cancelled = true;
          reject(new Error('PullImage: CANCELLED: Cancelled on client'));
        });
      }),
    imageStatus: async () => null,
  } as unknown as CriClient;
  const puller = new ImagePuller(cri, Date.now, 50);
  const events: string[] = [];
  const err = await puller
    .ensure({ name: 'main', image: 'registry.invalid/busybox:latest' }, (type, reason, message) =>
      events.push(`${type} ${reason} ${message}`),
    )
    .catch((e: unknown) => e);
  assert.ok(cancelled, 'the runtime call was left running');
  assert.instance(err, ImageError);
  assert.is((err as ImageError).reason, 'ErrImagePull');
  assert.match((err as ImageError).message, 'pull did not finish within 0.05s');
  assert.ok(
    events.some((e) => e.startsWith('Warning Failed')),
    events.join('\n'),
  );
});

test.run();
