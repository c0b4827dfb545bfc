import { readFileSync } from 'node:fs';
import type { ServiceDefinition } from '@grpc/proto-loader';
import { fromJSON } from '@grpc/proto-loader';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { descriptor } from '#lib/cri/proto.gen.ts';
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

const opts = { longs: String, enums: String, defaults: true, oneofs: true };
const definition = fromJSON(descriptor as Parameters<typeof fromJSON>[0], opts);
const runtime = definition['runtime.v1.RuntimeService'] as ServiceDefinition;

test('the descriptor declares the RPCs the client uses', () => {
  const images = definition['runtime.v1.ImageService'] as ServiceDefinition;
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

test.run();
