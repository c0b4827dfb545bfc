import { readFileSync } from 'node:fs';
import { fromJSON } from '@grpc/proto-loader';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { load } from '#lib/cri/codec.gen.ts';
import { descriptor } from '#lib/cri/proto.gen.ts';
import { load as loadDmi } from '#lib/dmi/codec.gen.ts';
import { descriptor as dmiDescriptor } from '#lib/dmi/proto.gen.ts';
import { lazyServices } from '#lib/grpc/services.ts';
import {
  codecPath,
  generatedPath,
  protoPackages,
  renderCodecs,
  renderProto,
} from '../../scripts/gen-proto.ts';

test('every proto package has a generated descriptor and codecs that match its .proto files', () => {
  const names = protoPackages();
  assert.ok(names.includes('cri') && names.includes('dmi'));
  for (const name of names) {
    for (const [path, fresh] of [
      [generatedPath(name), renderProto(name)],
      [codecPath(name), renderCodecs(name)],
    ] as const)
      assert.ok(
        readFileSync(path, 'utf8') === fresh,
        `${path} is stale: run \`npx tsx scripts/gen-proto.ts\``,
      );
  }
});

test('the generated files are tables for lib/grpc/codec.ts, not code', () => {
  for (const path of [codecPath('cri'), codecPath('dmi')]) {
    const text = readFileSync(path, 'utf8');
    assert.not.match(text, /\bfunction\b|=>\s*\{|\bFunction\(|\beval\(/);
    assert.equal(text.match(/^import .*$/gm), [
      "import { type GeneratedProto, protoPackage } from '#lib/grpc/codec.ts';",
    ]);
  }
});

// What the agent uses (lib/grpc/services.ts), checked below against @grpc/proto-loader's `fromJSON`,
// which also plays the runtime's side of the CRI (Outpost's codecs only encode its requests and
// decode its responses).
const service = lazyServices(load);
const runtime = service('runtime.v1.RuntimeService')();
const OPTS = { longs: String, enums: String, defaults: true, oneofs: true };
type Def = Record<string, (typeof runtime)[string]>;
const loaded = (desc: () => Record<string, unknown>) =>
  fromJSON(desc() as Parameters<typeof fromJSON>[0], OPTS);
const theirRuntime = loaded(descriptor)['runtime.v1.RuntimeService'] as Def;

test('the descriptor declares the RPCs the client uses', () => {
  const images = service('runtime.v1.ImageService')();
  for (const m of ['Version', 'RunPodSandbox', 'ListContainers', 'ExecSync', 'Exec', 'Status'])
    assert.ok(runtime[m], m);
  for (const m of ['ListImages', 'ImageStatus', 'PullImage']) assert.ok(images[m], m);
  assert.is(runtime.ListContainers?.path, '/runtime.v1.RuntimeService/ListContainers');
});

test('messages use camelCase fields over the upstream field numbers', () => {
  const m = runtime.ListContainers!;
  const wire = m.requestSerialize({ filter: { podSandboxId: 'p', labelSelector: { app: 'web' } } });
  // ListContainersRequest.filter (1, 15 bytes) { pod_sandbox_id (3) = "p", label_selector (4) = { app: web } }
  assert.is(wire.toString('hex'), ['0a0f', '1a0170', '220a', '0a03617070', '1203776562'].join(''));
  const back = theirRuntime.ListContainers!.requestDeserialize(wire) as Record<
    string,
    Record<string, unknown>
  >;
  assert.equal(back.filter?.labelSelector, { app: 'web' });
  assert.is(back.filter?.podSandboxId, 'p');
});

test('responses decode int64 as strings, enums as names and unset messages as null', () => {
  const m = runtime.ContainerStatus!;
  // ContainerStatusResponse.status = 1 { state(3) = CONTAINER_EXITED(2), started_at(5) = 2^53 + 1, exit_code(7) = 3 }
  const startedAt = 2n ** 53n + 1n;
  const bytes = theirRuntime.ContainerStatus!.responseSerialize({
    status: { state: 'CONTAINER_EXITED', startedAt: startedAt.toString(), exitCode: 3 },
  });
  const res = m.responseDeserialize(bytes) as { status: Record<string, unknown> };
  assert.is(res.status.state, 'CONTAINER_EXITED');
  assert.is(res.status.startedAt, startedAt.toString());
  assert.is(res.status.finishedAt, '0');
  assert.is(res.status.exitCode, 3);
  assert.is(res.status.image, null);
  assert.equal(res.status.labels, {});
});

test('the definitions encode and decode as @grpc/proto-loader does', () => {
  const theirs = theirRuntime;
  for (const name of Object.keys(theirs)) {
    const ours = runtime[name]!;
    const m = theirs[name]!;
    assert.is(ours.path, m.path, name);
    assert.is(ours.requestStream, m.requestStream, name);
    assert.is(ours.responseStream, m.responseStream, name);
    assert.is(ours.originalName, m.originalName, name);
  }
  assert.equal(Object.keys(runtime).sort(), Object.keys(theirs).sort());
  const req = {
    config: {
      metadata: { name: 'p', uid: 'u', namespace: 'n', attempt: 1 },
      labels: { app: 'web' },
      linux: { securityContext: { namespaceOptions: { network: 'NODE' } } },
    },
    runtimeHandler: '',
  };
  // The same message either way (protobufjs 8 leaves a proto3 field at its default off the wire,
  // proto-loader's protobufjs 7 writes an empty string that was set: equal to a proto3 reader).
  const ours = runtime.RunPodSandbox!.requestSerialize(req);
  const wire = theirs.RunPodSandbox!.requestSerialize(req);
  assert.equal(
    theirs.RunPodSandbox!.requestDeserialize(ours),
    theirs.RunPodSandbox!.requestDeserialize(wire),
  );
  const status = theirs.ContainerStatus!.responseSerialize({
    status: { id: 'c', state: 'CONTAINER_RUNNING', createdAt: '1700000000000000000', labels: { a: 'b' } },
    info: { k: 'v' },
  });
  assert.equal(
    runtime.ContainerStatus!.responseDeserialize(status),
    theirs.ContainerStatus!.responseDeserialize(status),
  );
});

test('every method of both packages encodes and decodes as @grpc/proto-loader does, defaults and all', () => {
  let methods = 0;
  for (const [desc, gen] of [
    [descriptor, load],
    [dmiDescriptor, loadDmi],
  ] as const) {
    const loader = loaded(desc);
    const ours = lazyServices(gen);
    for (const name of Object.keys(gen())) {
      const mine = ours(name)() as Def;
      const theirs = loader[name] as Def;
      assert.equal(Object.keys(mine).sort(), Object.keys(theirs).sort(), name);
      for (const [method, m] of Object.entries(theirs)) {
        const o = mine[method]!;
        const what = `${name}/${method}`;
        // An empty message: every field at its default (null messages, [] lists, {} maps, '0').
        const request = m.requestSerialize({});
        const response = m.responseSerialize({});
        // The caller's side: requests out, responses in; and the server's: requests in, responses out.
        assert.equal(m.requestDeserialize(o.requestSerialize({})), m.requestDeserialize(request), what);
        assert.equal(o.responseDeserialize(response), m.responseDeserialize(response), what);
        assert.equal(o.requestDeserialize(request), m.requestDeserialize(request), what);
        assert.equal(m.responseDeserialize(o.responseSerialize({})), m.responseDeserialize(response), what);
        methods++;
      }
    }
  }
  assert.ok(methods >= 30, `${methods} methods`); // 32 today: CRI 22, DMI 10
});

test('DMI: a device with Any-packed protocol configuration encodes and decodes as proto-loader does', () => {
  const theirs = loaded(dmiDescriptor)['v1beta1.DeviceMapperService'] as Def;
  const mine = lazyServices(loadDmi)('v1beta1.DeviceMapperService')();
  const any = {
    type_url: 'type.googleapis.com/google.protobuf.StringValue',
    value: Buffer.from([0x0a, 1, 0x78]),
  };
  const req = {
    device: {
      name: 'thermo',
      spec: {
        deviceModelReference: 'model',
        protocol: { protocolName: 'modbus', configData: { data: { slaveID: any } } },
        properties: [{ name: 't', collectCycle: '1000', reportToCloud: true }],
      },
    },
  };
  const ours = mine.RegisterDevice!.requestSerialize(req);
  const decoded = mine.RegisterDevice!.requestDeserialize(ours);
  assert.equal(decoded, theirs.RegisterDevice!.requestDeserialize(ours));
  assert.equal(
    decoded,
    theirs.RegisterDevice!.requestDeserialize(theirs.RegisterDevice!.requestSerialize(req)),
  );
  const device = (
    decoded as { device: { spec: { protocol: { configData: { data: Record<string, unknown> } } } } }
  ).device;
  assert.equal(device.spec.protocol.configData.data.slaveID, { type_url: any.type_url, value: any.value });
});

test.run();
