// The CRI sandbox a pod gets: its own network namespace unless hostNetwork, hostPorts as mappings.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Pod } from '#lib/kube/types.ts';
import { buildSandboxConfig } from '#lib/pods/worker/sandbox.ts';

const opts = { attempt: 0, logDirectory: '/logs', specHash: 'h', managedBy: 'm' };
const pod = (spec: Record<string, unknown>): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default', uid: 'u1' },
  spec: { containers: [{ name: 'main' }], ...spec },
});

test('a pod without hostNetwork gets a network namespace, its name as hostname and its hostPorts mapped', () => {
  const cfg = buildSandboxConfig(
    pod({
      containers: [
        { name: 'a', ports: [{ containerPort: 80, hostPort: 8080 }, { containerPort: 81 }] },
        { name: 'b', ports: [{ containerPort: 53, hostPort: 5353, protocol: 'UDP', hostIP: '127.0.0.1' }] },
      ],
    }),
    opts,
  );
  assert.is(cfg.linux?.securityContext?.namespaceOptions?.network, 'POD');
  assert.is(cfg.hostname, 'web');
  assert.equal(cfg.portMappings, [
    { protocol: 'TCP', containerPort: 80, hostPort: 8080 },
    { protocol: 'UDP', containerPort: 53, hostPort: 5353, hostIp: '127.0.0.1' },
  ]);
});

test('spec.hostname wins over the pod name', () => {
  assert.is(buildSandboxConfig(pod({ hostname: 'box' }), opts).hostname, 'box');
});

test('a hostNetwork pod keeps the node network: no hostname, no port mappings', () => {
  const cfg = buildSandboxConfig(
    pod({ hostNetwork: true, containers: [{ name: 'a', ports: [{ containerPort: 80, hostPort: 80 }] }] }),
    opts,
  );
  assert.is(cfg.linux?.securityContext?.namespaceOptions?.network, 'NODE');
  assert.is(cfg.hostname, undefined);
  assert.is(cfg.portMappings, undefined);
});

test.run();
