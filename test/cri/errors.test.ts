import type { ServiceError } from '@grpc/grpc-js';
import { Metadata, status } from '@grpc/grpc-js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toStatusError } from '#lib/cri/errors.ts';
import { isGrpcError } from '#lib/grpc/errors.ts';
import { conflict, isStatusError } from '#lib/kube/status.ts';

const endpoint = 'unix:///run/containerd/containerd.sock';

// Shaped like the errors grpc-js hands to a unary callback.
function grpcError(code: status, details: string): ServiceError {
  return Object.assign(new Error(`${code} ${status[code]}: ${details}`), {
    code,
    details,
    metadata: new Metadata(),
  });
}

test('NOT_FOUND names the object the call addressed', () => {
  const err = grpcError(status.NOT_FOUND, 'an error occurred when try to find container "abc": not found');
  const s = toStatusError(err, {
    endpoint,
    method: 'ContainerStatus',
    object: { kind: 'containers', name: 'abc' },
  });
  assert.is(s.code, 404);
  assert.is(s.reason, 'NotFound');
  assert.is(s.message, 'containers "abc" not found');
  assert.equal(s.details, { name: 'abc', kind: 'containers' });
});

test('NOT_FOUND without an object keeps the runtime message', () => {
  const s = toStatusError(grpcError(status.NOT_FOUND, 'image "x" not found'), {
    endpoint,
    method: 'CreateContainer',
  });
  assert.is(s.code, 404);
  assert.is(s.reason, 'NotFound');
  assert.match(s.message, 'CreateContainer: image "x" not found');
});

test('UNAVAILABLE is 503 naming the runtime endpoint', () => {
  const err = grpcError(status.UNAVAILABLE, 'No connection established. Last error: connect ENOENT');
  const s = toStatusError(err, { endpoint, method: 'Version' });
  assert.is(s.code, 503);
  assert.is(s.reason, 'ServiceUnavailable');
  assert.match(s.message, endpoint);
  assert.match(s.message, 'ENOENT');
});

test('DEADLINE_EXCEEDED is 504 with the method and deadline', () => {
  const err = grpcError(status.DEADLINE_EXCEEDED, 'Deadline exceeded');
  const s = toStatusError(err, { endpoint, method: 'StopContainer', timeoutMs: 1500 });
  assert.is(s.code, 504);
  assert.is(s.reason, 'Timeout');
  assert.match(s.message, 'StopContainer');
  assert.match(s.message, '1500 ms');
});

test('CANCELLED is 503 ServiceUnavailable: the agent stopping cancelled the call, or the runtime did', () => {
  const err = grpcError(status.CANCELLED, 'Cancelled on client');
  const ours = toStatusError(err, { endpoint, method: 'ListContainers', timeoutMs: 30_000, aborted: true });
  assert.is(ours.code, 503);
  assert.is(ours.reason, 'ServiceUnavailable');
  assert.is(
    ours.message,
    `ListContainers on the container runtime at ${endpoint} was cancelled: the agent is stopping`,
  );
  const theirs = toStatusError(grpcError(status.CANCELLED, 'context canceled'), {
    endpoint,
    method: 'StopContainer',
  });
  assert.is(theirs.code, 503);
  assert.is(theirs.reason, 'ServiceUnavailable');
  assert.is(
    theirs.message,
    `StopContainer was cancelled by the container runtime at ${endpoint}: context canceled`,
  );
});

test('ALREADY_EXISTS is 409 and INVALID_ARGUMENT is 400', () => {
  const exists = toStatusError(grpcError(status.ALREADY_EXISTS, 'name "web_default" is reserved'), {
    endpoint,
    method: 'RunPodSandbox',
  });
  assert.is(exists.code, 409);
  assert.is(exists.reason, 'Conflict');
  assert.match(exists.message, 'is reserved');
  const bad = toStatusError(grpcError(status.INVALID_ARGUMENT, 'config is required'), {
    endpoint,
    method: 'CreateContainer',
  });
  assert.is(bad.code, 400);
  assert.is(bad.reason, 'BadRequest');
});

test('any other gRPC code is 500 with the code name', () => {
  for (const code of [status.UNKNOWN, status.FAILED_PRECONDITION, status.INTERNAL]) {
    const s = toStatusError(grpcError(code, 'boom'), { endpoint, method: 'StartContainer' });
    assert.is(s.code, 500, status[code]);
    assert.is(s.reason, 'InternalError');
    assert.match(s.message, status[code]);
  }
});

test('a Status error passes through and a plain error becomes 500', () => {
  const original = conflict('busy');
  assert.is(toStatusError(original, { endpoint, method: 'Version' }), original);
  const s = toStatusError(new TypeError('bad'), { endpoint, method: 'Version' });
  assert.ok(isStatusError(s));
  assert.is(s.code, 500);
  assert.match(s.message, 'bad');
});

test('isGrpcError tells gRPC errors from others', () => {
  assert.ok(isGrpcError(grpcError(status.NOT_FOUND, 'x')));
  assert.not.ok(isGrpcError(new Error('x')));
  assert.not.ok(isGrpcError({ code: 5, details: 'x' }));
  assert.not.ok(isGrpcError(undefined));
});

test('an empty "Resolution note: " that grpc-js appends is not left dangling in the message', () => {
  const err = grpcError(
    status.UNAVAILABLE,
    'No connection established. Last error: Error: connect ENOENT /run/containerd/containerd.sock. Resolution note: ',
  );
  const s = toStatusError(err, { endpoint, method: 'Version' });
  assert.is(
    s.message,
    `container runtime at ${endpoint} is unavailable: No connection established. Last error: Error: connect ENOENT /run/containerd/containerd.sock`,
  );
});

test.run();
