import { readdirSync, readFileSync, statfsSync } from 'node:fs';
import { arch, cpus, freemem, hostname, release, totalmem } from 'node:os';
import { dirname } from 'node:path';
import type { Node } from '#lib/kube/printers/nodes.ts';
import { nodeIPv4 } from '#lib/pods/runtime/node-ip.ts';
import { KUBE_MINOR, OUTPOST_VERSION } from '#lib/version.ts';
import type { AppContext } from './env.ts';

const MAX_PODS = 110;

function osImage(): string {
  try {
    return /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? 'Linux';
  } catch {
    return 'Linux';
  }
}

function addresses(nodeIp: string | undefined): { type: string; address: string }[] {
  const ip = nodeIp ?? nodeIPv4();
  return [...(ip ? [{ type: 'InternalIP', address: ip }] : []), { type: 'Hostname', address: hostname() }];
}

function disk(path: string): { total: number; free: number } {
  try {
    const s = statfsSync(path);
    return { total: s.blocks * s.bsize, free: s.bavail * s.bsize };
  } catch {
    return { total: 0, free: 0 };
  }
}

function pids(): { used: number; max: number } {
  try {
    const max = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim());
    const used = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).length;
    return { used, max };
  } catch {
    return { used: 0, max: 1 };
  }
}

const Ki = (bytes: number) => `${Math.floor(bytes / 1024)}Ki`;

/**
 * This node as a core v1 Node: labels, addresses, capacity and allocatable from the host,
 * conditions from real measurements (memory, the data directory's disk, process ids), nodeInfo
 * with the container runtime's version when it answers.
 */
export async function describeNode(c: AppContext): Promise<Node> {
  const { nodeName, store, cri, now } = c.var;
  let runtime = 'unknown://';
  if (cri) {
    try {
      const v = await Promise.race([
        cri.version(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 1000).unref()),
      ]);
      runtime = `${v.runtimeName}://${v.runtimeVersion}`;
    } catch {}
  }
  const memTotal = totalmem();
  const memFree = freemem();
  const dataDir = store.metabase.path === ':memory:' ? '/' : dirname(store.metabase.path);
  const d = disk(dataDir);
  const p = pids();
  const stamp = new Date(now()).toISOString().replace(/\.\d+Z$/, 'Z');
  const condition = (type: string, pressure: boolean, reason: string, message: string) => ({
    type,
    status: pressure ? 'True' : 'False',
    lastHeartbeatTime: stamp,
    lastTransitionTime: stamp,
    reason: pressure ? reason.replace('Sufficient', 'Has').replace('NoDisk', 'Disk') : reason,
    message,
  });
  const capacity = {
    cpu: String(cpus().length),
    memory: Ki(memTotal),
    'ephemeral-storage': Ki(d.total),
    pods: String(MAX_PODS),
  };
  const created = store.metabase.sqlite
    .prepare<[], { created: string | null }>(
      `SELECT MIN(json_extract(object, '$.metadata.creationTimestamp')) AS created FROM pods`,
    )
    .get()?.created;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: nodeName,
      uid:
        store.metabase.sqlite.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'id'").get()
          ?.value ?? nodeName,
      resourceVersion: String(store.rv.current),
      creationTimestamp: created ?? stamp,
      labels: {
        'kubernetes.io/hostname': nodeName,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': arch() === 'x64' ? 'amd64' : arch(),
        'beta.kubernetes.io/os': 'linux',
        'beta.kubernetes.io/arch': arch() === 'x64' ? 'amd64' : arch(),
        'node-role.kubernetes.io/edge': '',
      },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0' },
    },
    spec: {},
    status: {
      capacity,
      allocatable: capacity,
      conditions: [
        condition(
          'MemoryPressure',
          memFree < memTotal * 0.05,
          'KubeletHasSufficientMemory',
          `kubelet has ${memFree < memTotal * 0.05 ? 'insufficient' : 'sufficient'} memory available`,
        ),
        store.disk.full
          ? condition(
              'DiskPressure',
              true,
              'KubeletHasNoDiskPressure',
              `outpost cannot write its metabase: no space left in ${store.disk.dataDir} (${Math.max(0, store.disk.full.free)} bytes free)`,
            )
          : condition(
              'DiskPressure',
              d.total > 0 && d.free < d.total * 0.1,
              'KubeletHasNoDiskPressure',
              `${d.free < d.total * 0.1 ? 'kubelet has disk pressure' : 'kubelet has no disk pressure'}`,
            ),
        condition(
          'PIDPressure',
          p.used > p.max * 0.9,
          'KubeletHasSufficientPID',
          'kubelet has sufficient PID available',
        ),
        { ...condition('Ready', false, 'KubeletReady', 'Outpost is posting ready status'), status: 'True' },
      ],
      addresses: addresses(c.var.nodeIp),
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: readSafe('/etc/machine-id'),
        systemUUID: readSafe('/sys/class/dmi/id/product_uuid'),
        bootID: readSafe('/proc/sys/kernel/random/boot_id'),
        kernelVersion: release(),
        osImage: osImage(),
        containerRuntimeVersion: runtime,
        kubeletVersion: `v1.${KUBE_MINOR}.0-outpost.${OUTPOST_VERSION}`,
        kubeProxyVersion: '',
        operatingSystem: 'linux',
        architecture: arch() === 'x64' ? 'amd64' : arch(),
      },
    },
  };
}

function readSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}
