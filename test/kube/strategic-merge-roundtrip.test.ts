// Property tests: for random pairs of pods, the created patch turns the first into the second.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  applyStrategicMergePatch as apply,
  createStrategicMergePatch as create,
  type Json,
  podSchema,
} from '#lib/kube/strategic-merge.ts';

type Obj = Record<string, Json>;

// mulberry32: small, seedable, good enough to vary test data reproducibly.
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Gen {
  constructor(
    private readonly next: () => number,
    private readonly nulls: boolean,
  ) {}
  int = (n: number): number => Math.floor(this.next() * n);
  chance = (p = 0.5): boolean => this.next() < p;
  pick = <T>(xs: readonly T[]): T => xs[this.int(xs.length)]!;
  // A random subset in random order, never with duplicates (merge keys and set members are unique).
  subset = <T>(xs: readonly T[]): T[] => {
    const out = xs.filter(() => this.chance(0.6));
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };
  // Sets `key` on `o` some of the time.
  maybe = (o: Obj, key: string, value: () => Json, p = 0.6): void => {
    if (this.chance(p)) o[key] = value();
  };
  time = (): string => `2024-05-0${1 + this.int(3)}T10:0${this.int(10)}:00Z`;

  state(): Obj {
    switch (this.int(4)) {
      case 0:
        return { waiting: { reason: this.pick(['ContainerCreating', 'CrashLoopBackOff', 'ErrImagePull']) } };
      case 1:
        return { running: { startedAt: this.time() } };
      case 2: {
        const t: Obj = {
          exitCode: this.int(3),
          reason: this.pick(['Completed', 'Error']),
          finishedAt: this.time(),
        };
        this.maybe(t, 'containerID', () => `containerd://${this.int(5)}`);
        this.maybe(t, 'signal', () => 9, 0.2);
        return { terminated: t };
      }
      default:
        return {};
    }
  }

  containerStatus(name: string): Obj {
    const s: Obj = {
      name,
      ready: this.chance(),
      restartCount: this.int(3),
      image: this.pick(['nginx:1', 'nginx:2']),
    };
    s.imageID = `sha256:${this.int(4)}`;
    this.maybe(s, 'state', () => this.state(), 0.9);
    this.maybe(s, 'lastState', () => this.state(), 0.4);
    this.maybe(s, 'started', () => this.chance());
    this.maybe(s, 'containerID', () => `containerd://${this.int(5)}`);
    return s;
  }

  condition(type: string): Obj {
    const c: Obj = { type, status: this.pick(['True', 'False', 'Unknown']), lastTransitionTime: this.time() };
    this.maybe(c, 'reason', () => this.pick(['ContainersNotReady', 'PodCompleted']), 0.4);
    this.maybe(c, 'message', () => `m${this.int(3)}`, 0.3);
    if (this.nulls) this.maybe(c, 'lastProbeTime', () => null, 0.5);
    return c;
  }

  status(): Obj {
    const s: Obj = {};
    this.maybe(s, 'phase', () => this.pick(['Pending', 'Running', 'Succeeded', 'Failed']), 0.9);
    this.maybe(s, 'conditions', () =>
      this.subset(['PodScheduled', 'Initialized', 'ContainersReady', 'Ready', 'DisruptionTarget']).map((t) =>
        this.condition(t),
      ),
    );
    this.maybe(s, 'containerStatuses', () =>
      this.subset(['app', 'sidecar', 'proxy', 'log']).map((n) => this.containerStatus(n)),
    );
    this.maybe(
      s,
      'initContainerStatuses',
      () => this.subset(['init', 'migrate']).map((n) => this.containerStatus(n)),
      0.4,
    );
    this.maybe(s, 'podIPs', () => this.subset(['10.0.0.1', '10.0.0.2', 'fd00::1']).map((ip) => ({ ip })));
    this.maybe(s, 'hostIPs', () => this.subset(['192.168.1.10', 'fd01::10']).map((ip) => ({ ip })), 0.4);
    this.maybe(s, 'podIP', () => this.pick(['10.0.0.1', '10.0.0.2']));
    this.maybe(s, 'startTime', () => this.time());
    this.maybe(s, 'qosClass', () => this.pick(['BestEffort', 'Burstable']), 0.4);
    this.maybe(s, 'message', () => this.pick(['evicted', '']), 0.2);
    // A field that changes type between versions: replaced whole whatever its shape.
    this.maybe(
      s,
      'extra',
      () => this.pick<Json>(['x', 3, true, [1, 2], { a: { b: 1 } }, { a: { c: [1] } }]),
      0.3,
    );
    if (this.nulls) this.maybe(s, 'nominatedNodeName', () => null, 0.3);
    return s;
  }

  pod(): Obj {
    const metadata: Obj = { name: 'web', namespace: 'shop' };
    this.maybe(metadata, 'finalizers', () => this.subset(['a.io/x', 'b.io/y', 'c.io/z']));
    this.maybe(metadata, 'labels', () =>
      Object.fromEntries(this.subset(['app', 'tier', 'env']).map((k) => [k, `v${this.int(2)}`])),
    );
    this.maybe(
      metadata,
      'ownerReferences',
      () => this.subset(['u1', 'u2']).map((uid) => ({ uid, kind: 'ReplicaSet', name: uid })),
      0.3,
    );
    const containers = this.subset(['app', 'sidecar']).map((name) => {
      const c: Obj = { name, image: this.pick(['nginx:1', 'nginx:2']) };
      this.maybe(c, 'env', () =>
        this.subset(['A', 'B', 'C']).map((n) => ({ name: n, value: `${this.int(3)}` })),
      );
      this.maybe(c, 'ports', () =>
        this.subset([80, 443, 9090]).map((p) => ({ containerPort: p, protocol: 'TCP' })),
      );
      this.maybe(c, 'args', () => this.subset(['-v', '--debug', '-q']), 0.4);
      return c;
    });
    const spec: Obj = { containers };
    this.maybe(
      spec,
      'volumes',
      () =>
        this.subset(['data', 'cache']).map((name) =>
          this.chance() ? { name, emptyDir: {} } : { name, hostPath: { path: `/srv/${name}` } },
        ),
      0.4,
    );
    this.maybe(
      spec,
      'tolerations',
      () => this.subset(['a', 'b']).map((key) => ({ key, operator: 'Exists' })),
      0.3,
    );
    const pod: Obj = { metadata, spec };
    this.maybe(pod, 'status', () => this.status(), 0.9);
    return pod;
  }
}

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object') for (const x of Object.values(v)) deepFreeze(x);
  return Object.freeze(v);
}

// A strategic merge patch cannot set a key to null (null deletes), so null and absent are the same state.
function stripNulls(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripNulls);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).flatMap(([k, x]) => (x === null ? [] : [[k, stripNulls(x)]])));
}

const pairs = (seed: number, n: number, nulls: boolean): [Obj, Obj][] => {
  const g = new Gen(prng(seed), nulls);
  return Array.from({ length: n }, () => [deepFreeze(g.pod()), deepFreeze(g.pod())]);
};

test('round trip: apply(original, create(original, modified)) equals modified for 300 random pods', () => {
  for (const [i, [original, modified]] of pairs(20240501, 300, false).entries()) {
    // The patch goes over the wire, so apply what JSON makes of it.
    const patch = JSON.parse(JSON.stringify(create(original, modified, podSchema)));
    assert.equal(apply(original, patch, podSchema), modified, `pair ${i}: ${JSON.stringify(patch)}`);
  }
});

test('round trip with nulls in the data: equal once null members are treated as absent', () => {
  for (const [i, [original, modified]] of pairs(7, 200, true).entries()) {
    const patch = create(original, modified, podSchema);
    assert.equal(stripNulls(apply(original, patch, podSchema)), stripNulls(modified), `pair ${i}`);
  }
});

test('created patches are idempotent: applying one to its own result changes nothing', () => {
  for (const [i, [original, modified]] of pairs(99, 200, false).entries()) {
    const patch = create(original, modified, podSchema);
    assert.equal(apply(modified, patch, podSchema), modified, `pair ${i}`);
  }
});

test('created patches are minimal: unchanged pods give {}, unchanged status fields are left out', () => {
  for (const [i, [original, modified]] of pairs(31337, 200, false).entries()) {
    assert.equal(create(original, structuredClone(original), podSchema), {}, `pair ${i}`);
    const before = (original.status ?? {}) as Obj;
    const after = (modified.status ?? {}) as Obj;
    const patch = (create(original, modified, podSchema).status ?? {}) as Obj;
    for (const key of Object.keys(after)) {
      if (JSON.stringify(before[key]) === JSON.stringify(after[key])) {
        assert.is(patch[key], undefined, `pair ${i}: status.${key} did not change`);
        assert.is(patch[`$setElementOrder/${key}`], undefined, `pair ${i}: status.${key} did not change`);
      }
    }
  }
});

test('random pairs exercise every directive the patch format has', () => {
  const seen = new Set<string>();
  const walk = (v: Json): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k.startsWith('$')) seen.add(k === '$patch' ? `$patch:${x}` : k.split('/')[0]!);
        if (x === null) seen.add('null');
        walk(x);
      }
    }
  };
  for (const [original, modified] of pairs(20240501, 300, false)) walk(create(original, modified, podSchema));
  assert.equal([...seen].sort(), [
    '$deleteFromPrimitiveList',
    '$patch:delete',
    '$retainKeys',
    '$setElementOrder',
    'null',
  ]);
});

test.run();
