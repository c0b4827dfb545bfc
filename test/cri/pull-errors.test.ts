import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toStatusError } from '#lib/cri/errors.ts';
import { isRegistryUnreachable, unreachableCause } from '#lib/cri/pull-errors.ts';
import { notFound, timeout, unavailable } from '#lib/kube/status.ts';

// The details of PullImage failures captured from containerd 1.6.20's CRI plugin (Debian 12), each
// against what the test set up: a closed port, an unresolvable name, a listener that never
// answers TLS, a registry answering 401, a host with a certificate without IP SANs.
const CAPTURED = {
  refused:
    'failed to pull and unpack image "127.0.0.1:1/busybox:latest": failed to resolve reference "127.0.0.1:1/busybox:latest": failed to do request: Head "http://127.0.0.1:1/v2/busybox/manifests/latest": dial tcp 127.0.0.1:1: connect: connection refused',
  dns: 'failed to pull and unpack image "registry.invalid/busybox:latest": failed to resolve reference "registry.invalid/busybox:latest": failed to do request: Head "https://registry.invalid/v2/busybox/manifests/latest": dial tcp: lookup registry.invalid on 10.255.255.53:53: no such host',
  tlsTimeout:
    'failed to pull and unpack image "192.0.2.2:39711/busybox:latest": failed to resolve reference "192.0.2.2:39711/busybox:latest": failed to do request: Head "https://192.0.2.2:39711/v2/busybox/manifests/latest": net/http: TLS handshake timeout',
  unauthorized:
    'failed to pull and unpack image "127.0.0.1:45941/secret/busybox:latest": failed to resolve reference "127.0.0.1:45941/secret/busybox:latest": pulling from host 127.0.0.1:45941 failed with status code [manifests latest]: 401 Unauthorized',
  x509: 'failed to pull and unpack image "10.255.255.1/busybox:latest": failed to resolve reference "10.255.255.1/busybox:latest": failed to do request: Head "https://10.255.255.1/v2/busybox/manifests/latest": x509: cannot validate certificate for 10.255.255.1 because it doesn\'t contain any IP SANs',
};

const pullError = (code: status, details: string) =>
  toStatusError(
    Object.assign(new Error(details), { code, details, metadata: new Metadata() }) as ServiceError,
    {
      endpoint: 'unix:///run/containerd/containerd.sock',
      method: 'PullImage',
      object: { kind: 'images', name: 'x' },
    },
  );

test('a refused connection, a failed DNS lookup and a TLS timeout are an unreachable registry', () => {
  assert.is(unreachableCause(CAPTURED.refused), 'connection refused');
  assert.is(unreachableCause(CAPTURED.dns), 'no such host');
  assert.is(unreachableCause(CAPTURED.tlsTimeout), 'timeout');
  for (const details of [CAPTURED.refused, CAPTURED.dns, CAPTURED.tlsTimeout])
    assert.ok(isRegistryUnreachable(pullError(status.UNKNOWN, details)), details);
});

test('Go network failures not captured here are classified the same way', () => {
  assert.is(unreachableCause('dial tcp 10.0.0.1:443: i/o timeout'), 'timeout');
  assert.is(
    unreachableCause('dial tcp: lookup r.example on 127.0.0.53:53: server misbehaving'),
    'DNS lookup failed',
  );
  assert.is(
    unreachableCause('dial tcp 10.0.0.1:443: connect: network is unreachable'),
    'network is unreachable',
  );
  assert.is(unreachableCause('dial tcp 10.0.0.1:443: connect: no route to host'), 'no route to host');
});

test('an answer from the registry is not: unauthorized, not found, a bad certificate', () => {
  assert.not.ok(isRegistryUnreachable(pullError(status.UNKNOWN, CAPTURED.unauthorized)));
  assert.not.ok(isRegistryUnreachable(pullError(status.UNKNOWN, CAPTURED.x509)));
  // containerd answers a missing manifest with NOT_FOUND, a 404 Status here.
  assert.not.ok(isRegistryUnreachable(pullError(status.NOT_FOUND, 'not found')));
  assert.not.ok(isRegistryUnreachable(notFound('images', '127.0.0.1:45941/busybox:latest')));
});

test('a pull past its deadline is unreachable; the runtime itself being down is not', () => {
  assert.ok(isRegistryUnreachable(timeout('pull did not finish within 120s')));
  assert.ok(isRegistryUnreachable(pullError(status.DEADLINE_EXCEEDED, 'deadline')));
  assert.not.ok(
    isRegistryUnreachable(
      unavailable('container runtime at unix:///x is unavailable: connect: connection refused'),
    ),
  );
});

test.run();
