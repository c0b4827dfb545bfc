import { readFileSync } from 'node:fs';
import { fromJSON } from '@grpc/proto-loader';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { descriptor } from '#lib/cri/proto.gen.ts';
import { lazyServices } from '#lib/grpc/services.ts';
import { generatedPath, protoPackages, renderProto } from '../../scripts/gen-proto.ts';

test('every proto package has a generated descriptor that matches its .proto files', () => {
  const names = protoPackages();
  assert.ok(names.includes('cri'));
  for (const name of names) {
    const committed = readFileSync(generatedPath(name), 'utf8');
    const fresh = renderProto(name);
    assert.ok(committed === fresh, `lib/${name}/proto.gen.ts is stale: run \`npx tsx scripts/gen-proto.ts\``);
  }
});

// What the agent uses (lib/grpc/services.ts), checked below against @grpc/proto-loader's `fromJSON`.
const service = lazyServices(descriptor);
const runtime = service('runtime.v1.RuntimeService')();

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
  const back = m.requestDeserialize(wire) as Record<string, Record<string, unknown>>;
  assert.equal(back.filter?.labelSelector, { app: 'web' });
  assert.is(back.filter?.podSandboxId, 'p');
});

test('responses decode int64 as strings, enums as names and unset messages as null', () => {
  const m = runtime.ContainerStatus!;
  // ContainerStatusResponse.status = 1 { state(3) = CONTAINER_EXITED(2), started_at(5) = 2^53 + 1, exit_code(7) = 3 }
  const startedAt = 2n ** 53n + 1n;
  const bytes = m.responseSerialize({
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
  const opts = { longs: String, enums: String, defaults: true, oneofs: true };
  const loader = fromJSON(descriptor() as Parameters<typeof fromJSON>[0], opts);
  const theirs = loader['runtime.v1.RuntimeService'] as Record<string, (typeof runtime)[string]>;
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
  assert.equal(
    runtime.RunPodSandbox!.requestDeserialize(wire),
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

test.run();
