// What the node reports about its host, read the way kubelet reads it: capacity from the machine,
// identity from /etc/machine-id and /proc, pressure from kubelet's default hard eviction thresholds
// (memory.available < 100Mi, nodefs.available < 10%, pid usage > 90%).
import { readFileSync, statfsSync } from 'node:fs';
import { arch, cpus, hostname, release, totalmem } from 'node:os';
import { nodeIPv4 } from '#lib/pods/runtime/node-ip.ts';

/** A node's facts at one moment. */
export interface HostFacts {
  hostname: string;
  internalIP: string | undefined;
  cpu: number;
  memoryBytes: number;
  memoryAvailableBytes: number;
  diskBytes: number;
  diskAvailableBytes: number;
  pidsMax: number;
  pidsUsed: number;
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  osImage: string;
  architecture: string;
}

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
};

/** Node's arch names as Go's GOARCH spells them (kubernetes.io/arch). */
export const goArch = (a = arch()): string =>
  ({ x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x' })[a] ?? a;

function osImage(): string {
  const m = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(read('/etc/os-release') ?? '');
  return m?.[1] ?? 'Linux';
}

function memAvailable(): number {
  const m = /^MemAvailable:\s+(\d+) kB$/m.exec(read('/proc/meminfo') ?? '');
  return m ? Number(m[1]) * 1024 : 0;
}

/** Reads the host; `dataDir` is the filesystem whose space counts as ephemeral storage. */
export function readHost(dataDir: string): HostFacts {
  let diskBytes = 0;
  let diskAvailableBytes = 0;
  try {
    const s = statfsSync(dataDir);
    diskBytes = s.blocks * s.bsize;
    diskAvailableBytes = s.bavail * s.bsize;
  } catch {
    // An unreadable data dir is reported elsewhere; no disk figures then.
  }
  const machineID = read('/etc/machine-id') ?? '';
  const loadavg = read('/proc/loadavg')?.split(' ')[3]?.split('/')[1];
  return {
    hostname: hostname().toLowerCase(),
    internalIP: nodeIPv4(),
    cpu: cpus().length,
    memoryBytes: totalmem(),
    memoryAvailableBytes: memAvailable(),
    diskBytes,
    diskAvailableBytes,
    pidsMax: Number(read('/proc/sys/kernel/pid_max') ?? 0),
    pidsUsed: Number(loadavg ?? 0),
    machineID,
    systemUUID: read('/sys/class/dmi/id/product_uuid') ?? machineID,
    bootID: read('/proc/sys/kernel/random/boot_id') ?? '',
    kernelVersion: release(),
    osImage: osImage(),
    architecture: goArch(),
  };
}
