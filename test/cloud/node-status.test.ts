import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { HostFacts } from '#lib/cloud/host.ts';
import { desiredStatus, stampConditions, statusFingerprint, statusPatch } from '#lib/cloud/node-status.ts';

const host: HostFacts = {
  hostname: 'h',
  internalIP: '10.0.0.5',
  cpu: 4,
  memoryBytes: 8 * 2 ** 30,
  memoryAvailableBytes: 4 * 2 ** 30,
  diskBytes: 100 * 2 ** 30,
  diskAvailableBytes: 50 * 2 ** 30,
  pidsMax: 4_194_304,
  pidsUsed: 300,
  machineID: 'm',
  systemUUID: 'u',
  bootID: 'b',
  kernelVersion: '6.1.0',
  osImage: 'Debian GNU/Linux 12 (bookworm)',
  architecture: 'arm64',
};
const report = { host, runtimeReady: true, runtimeVersion: 'containerd://1.6.20', port: 10550 };

test('the status reports capacity, addresses, nodeInfo and the four conditions', () => {
  const s = desiredStatus(report, 'edge-1');
  assert.equal(s.capacity, {
    cpu: '4',
    memory: '8388608Ki',
    pods: '110',
    'ephemeral-storage': '104857600Ki',
  });
  assert.equal(s.addresses, [
    { type: 'InternalIP', address: '10.0.0.5' },
    { type: 'Hostname', address: 'edge-1' },
  ]);
  assert.equal(
    s.conditions.map((c) => `${c.type}=${c.status}`),
    ['MemoryPressure=False', 'DiskPressure=False', 'PIDPressure=False', 'Ready=True'],
  );
  assert.is(s.nodeInfo.containerRuntimeVersion, 'containerd://1.6.20');
  assert.is(s.daemonEndpoints.kubeletEndpoint.Port, 10550);
});

test('metabase writes failing for lack of space: DiskPressure=True naming the place, whatever the fill level', () => {
  const s = desiredStatus({ ...report, metabaseFull: { dataDir: '/var/lib/outpost', free: 0 } }, 'edge-1');
  const c = s.conditions.find((x) => x.type === 'DiskPressure')!;
  assert.is(c.status, 'True');
  assert.is(c.reason, 'KubeletHasDiskPressure');
  assert.is(c.message, 'outpost cannot write its metabase: no space left in /var/lib/outpost (0 bytes free)');
  // Only the pressure counts for a patch, not the free bytes of the moment.
  const t = desiredStatus({ ...report, metabaseFull: { dataDir: '/var/lib/outpost', free: 4096 } }, 'edge-1');
  assert.is(statusFingerprint(t), statusFingerprint(s));
  assert.is.not(statusFingerprint(desiredStatus(report, 'edge-1')), statusFingerprint(s));
});

test('pressure and a down runtime show in the conditions', () => {
  const s = desiredStatus(
    {
      ...report,
      runtimeReady: false,
      runtimeMessage: 'ENOENT',
      host: { ...host, memoryAvailableBytes: 50 * 2 ** 20, diskAvailableBytes: 2 ** 30 },
    },
    'edge-1',
  );
  const by = Object.fromEntries(s.conditions.map((c) => [c.type, c]));
  assert.is(by.MemoryPressure?.status, 'True');
  assert.is(by.DiskPressure?.status, 'True');
  assert.is(by.Ready?.status, 'False');
  assert.match(by.Ready?.message ?? '', /ENOENT/);
});

test('the fingerprint ignores heartbeats but sees a changed condition', () => {
  const s = desiredStatus(report, 'edge-1');
  const a = { ...s, conditions: stampConditions(s.conditions, undefined, 1_000_000) };
  const b = { ...s, conditions: stampConditions(s.conditions, a.conditions, 9_000_000) };
  assert.is(statusFingerprint(a), statusFingerprint(b));
  assert.is(b.conditions[3]?.lastTransitionTime, a.conditions[3]?.lastTransitionTime);
  assert.is.not(b.conditions[3]?.lastHeartbeatTime, a.conditions[3]?.lastHeartbeatTime);
  const unknown = {
    ...b,
    conditions: b.conditions.map((c) => (c.type === 'Ready' ? { ...c, status: 'Unknown' as const } : c)),
  };
  assert.is.not(statusFingerprint(unknown), statusFingerprint(b));
  const again = stampConditions(s.conditions, unknown.conditions, 10_000_000);
  assert.is(again[3]?.lastTransitionTime, '1970-01-01T02:46:40Z');
});

test('the patch carries the element-order directives kubelet sends', () => {
  const p = statusPatch(desiredStatus(report, 'edge-1')) as { status: Record<string, unknown> };
  assert.equal(p.status['$setElementOrder/conditions'], [
    { type: 'MemoryPressure' },
    { type: 'DiskPressure' },
    { type: 'PIDPressure' },
    { type: 'Ready' },
  ]);
  assert.equal(p.status['$setElementOrder/addresses'], [{ type: 'InternalIP' }, { type: 'Hostname' }]);
});

test.run();
