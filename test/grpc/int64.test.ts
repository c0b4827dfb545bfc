// The codec's 64-bit integers (lib/grpc/codec.ts, BigInt arithmetic) against @grpc/proto-loader,
// whose protobufjs 7 uses the long library: the same bytes and the same decimal strings at the edges
// of every 64-bit field type the CRI subset has (int64, uint64, repeated int64). And the bundle:
// neither protobufjs nor the long library and its WebAssembly are in the serve script.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fromJSON } from '@grpc/proto-loader';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { load } from '#lib/cri/codec.gen.ts';
import { descriptor } from '#lib/cri/proto.gen.ts';
import { lazyServices } from '#lib/grpc/services.ts';
import { ensureBundle } from '../helpers/outpost-process.ts';

type Method = {
  requestSerialize(v: unknown): Buffer;
  requestDeserialize(b: Buffer): Record<string, unknown>;
  responseSerialize(v: unknown): Buffer;
  responseDeserialize(b: Buffer): Record<string, unknown>;
};
const ours = lazyServices(load)('runtime.v1.RuntimeService')() as unknown as Record<string, Method>;
const oursImages = lazyServices(load)('runtime.v1.ImageService')() as unknown as Record<string, Method>;
const loaded = fromJSON(descriptor() as Parameters<typeof fromJSON>[0], {
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const theirs = loaded['runtime.v1.RuntimeService'] as unknown as Record<string, Method>;
const theirImages = loaded['runtime.v1.ImageService'] as unknown as Record<string, Method>;

const SIGNED = ['0', '1', '-1', '255', String(2n ** 53n + 1n), String(2n ** 63n - 1n), String(-(2n ** 63n))];
const UNSIGNED = ['0', '1', String(2n ** 53n + 1n), String(2n ** 63n), String(2n ** 64n - 1n)];

test('int64 responses decode to the same decimal strings as the long library gives', () => {
  for (const v of SIGNED) {
    const wire = theirs.ContainerStatus!.responseSerialize({
      status: { id: 'c', createdAt: v, startedAt: v, finishedAt: '0' },
    });
    const status = ours.ContainerStatus!.responseDeserialize(wire).status as Record<string, unknown>;
    assert.is(status.createdAt, v, `created_at ${v}`);
    assert.is(status.startedAt, v, `started_at ${v}`);
    assert.is(status.finishedAt, '0');
  }
});

test('uint64 responses decode to the same decimal strings as the long library gives', () => {
  for (const v of UNSIGNED) {
    const wire = theirImages.ImageStatus!.responseSerialize({
      image: { id: 'i', size: v, uid: { value: v } },
    });
    const image = oursImages.ImageStatus!.responseDeserialize(wire).image as Record<string, unknown>;
    assert.is(image.size, v, `size ${v}`);
    // Int64Value.value is signed: the long library reads 2^63 and up as negative, and so does the codec.
    const theirsBack = theirImages.ImageStatus!.responseDeserialize(wire).image as Record<string, unknown>;
    assert.equal(image.uid, theirsBack.uid, `uid ${v}`);
  }
});

test('64-bit request fields given as strings or numbers encode to what the long library reads back', () => {
  for (const v of [...SIGNED, 2 ** 40, -7, 0]) {
    const resources = { cpuQuota: v, oomScoreAdj: v, memoryLimitInBytes: v };
    const req = { podSandboxId: 'p', config: { linux: { resources } } };
    const mine = ours.CreateContainer!.requestSerialize(req);
    // Compared decoded: protobufjs 8 leaves a proto3 zero off the wire, proto-loader's 7 writes it.
    const back = theirs.CreateContainer!.requestDeserialize(mine) as {
      config: { linux: { resources: Record<string, unknown> } };
    };
    assert.equal(
      back,
      theirs.CreateContainer!.requestDeserialize(theirs.CreateContainer!.requestSerialize(req)),
      `linux resources ${v}`,
    );
    assert.is(back.config.linux.resources.cpuQuota, String(v));
  }
  // Repeated int64, and an Int64Value given as a string.
  const securityContext = {
    supplementalGroups: ['0', '-1', String(2n ** 63n - 1n)],
    runAsUser: { value: String(-(2n ** 63n)) },
  };
  const sandbox = { config: { linux: { securityContext } } };
  const back = theirs.RunPodSandbox!.requestDeserialize(ours.RunPodSandbox!.requestSerialize(sandbox));
  assert.equal(
    back,
    theirs.RunPodSandbox!.requestDeserialize(theirs.RunPodSandbox!.requestSerialize(sandbox)),
  );
  const context = (back.config as { linux: { securityContext: Record<string, unknown> } }).linux
    .securityContext;
  assert.equal(context.supplementalGroups, securityContext.supplementalGroups);
  assert.equal(context.runAsUser, securityContext.runAsUser);
});

test("64-bit fields given as numbers and odd strings convert as protobufjs's fromObject does", () => {
  // Numbers lose their fraction and clamp to the signed range, NaN is 0; strings are decimal (a sign,
  // spaces around) and wrap to 64 bits; a long-like { low, high } is its two halves.
  const cases: [unknown, string][] = [
    [Number.NaN, '0'],
    [1.9, '1'],
    [-1.9, '-1'],
    [2 ** 70, String(2n ** 63n - 1n)],
    [-(2 ** 70), String(-(2n ** 63n))],
    [Number.POSITIVE_INFINITY, String(2n ** 63n - 1n)],
    [' +42 ', '42'],
    [String(2n ** 64n - 1n), '-1'],
    [{ low: -1, high: 0x7fffffff }, String(2n ** 63n - 1n)],
  ];
  for (const [v, want] of cases) {
    const req = { config: { linux: { resources: { cpuQuota: v } } } };
    const back = theirs.CreateContainer!.requestDeserialize(ours.CreateContainer!.requestSerialize(req)) as {
      config: { linux: { resources: { cpuQuota: string } } };
    };
    assert.is(back.config.linux.resources.cpuQuota, want, String(v));
    if (typeof v !== 'number' || Number.isFinite(v))
      assert.equal(
        back,
        theirs.CreateContainer!.requestDeserialize(theirs.CreateContainer!.requestSerialize(req)),
      );
  }
  for (const bad of ['1.5', '12abc', '0x10'])
    assert.throws(
      () => ours.CreateContainer!.requestSerialize({ config: { linux: { resources: { cpuQuota: bad } } } }),
      /\.runtime\.v1\.LinuxContainerResources\.cpuQuota: not a 64-bit integer/,
    );
});

test('the serve script carries neither protobufjs nor the long library and its WebAssembly', () => {
  ensureBundle();
  const root = join(import.meta.dirname, '../..');
  const meta = JSON.parse(readFileSync(join(root, 'dist/serve-script.meta.json'), 'utf8')) as {
    outputs: Record<string, { inputs: Record<string, unknown> }>;
  };
  const [script, output] = Object.entries(meta.outputs).find(([f]) => f.endsWith('.mjs'))!;
  assert.equal(
    Object.keys(output.inputs).filter((i) => /node_modules\/(long|protobufjs)\//.test(i)),
    [],
    'protobufjs or the long library is in the serve script',
  );
  assert.not.match(
    readFileSync(join(root, script), 'latin1'),
    /WebAssembly\.(Instance|Module|instantiate)\(/,
  );
});

test.run();
