// Resource usage as kubelet reports it to metrics-server and `kubectl top`: the node from /proc,
// pods and containers from CRI ListContainerStats, shaped as kubelet's stats summary
// (`/stats/summary`, stats/v1alpha1) and as its resource metrics (`/metrics/resource`).
import { readFileSync } from 'node:fs';
import type { CriClient } from '#lib/cri/client.ts';
import type { ContainerStats, UInt64Value } from '#lib/cri/types.ts';
import { CONTAINER_NAME, POD_NAME, POD_NAMESPACE, POD_UID } from './labels.ts';

export interface CpuStats {
  time: string;
  usageNanoCores?: number | undefined;
  usageCoreNanoSeconds: number;
}

export interface MemoryStats {
  time: string;
  availableBytes?: number | undefined;
  usageBytes?: number | undefined;
  workingSetBytes: number;
  rssBytes?: number | undefined;
  pageFaults?: number | undefined;
  majorPageFaults?: number | undefined;
}

export interface ContainerSummary {
  name: string;
  startTime?: string;
  cpu: CpuStats;
  memory: MemoryStats;
  rootfs?: { time: string; usedBytes?: number | undefined; inodesUsed?: number | undefined };
}

export interface PodSummary {
  podRef: { name: string; namespace: string; uid: string };
  startTime?: string;
  containers: ContainerSummary[];
  cpu: CpuStats;
  memory: MemoryStats;
}

export interface Summary {
  node: { nodeName: string; startTime: string; cpu: CpuStats; memory: MemoryStats; systemContainers: [] };
  pods: PodSummary[];
}

/** What the host reads: /proc/stat's first line and /proc/meminfo (injectable for tests). */
export interface HostReader {
  procStat(): string;
  meminfo(): string;
  uptimeSeconds(): number;
}

export const procReader: HostReader = {
  procStat: () => readFileSync('/proc/stat', 'utf8'),
  meminfo: () => readFileSync('/proc/meminfo', 'utf8'),
  uptimeSeconds: () => Number.parseFloat(readFileSync('/proc/uptime', 'utf8').split(' ')[0] ?? '0'),
};

const USER_HZ_NS = 10_000_000; // /proc/stat counts in 1/100 s

/** The node's cumulative busy CPU time in ns (everything but idle and iowait). */
export function nodeCpuNs(procStat: string): number {
  const line = procStat.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) return 0;
  const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
  return (
    ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * USER_HZ_NS
  );
}

/** The node's memory from /proc/meminfo, in bytes. */
export function nodeMemory(meminfo: string): { total: number; free: number; available: number } {
  const kb = (key: string) => {
    const m = new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(meminfo);
    return m ? Number(m[1]) * 1024 : 0;
  };
  return { total: kb('MemTotal'), free: kb('MemFree'), available: kb('MemAvailable') };
}

const num = (v: UInt64Value | undefined): number | undefined => (v ? Number(v.value) : undefined);
const iso = (ns: number | string) => new Date(Number(BigInt(ns) / 1_000_000n)).toISOString();

/**
 * Keeps the previous CPU sample per container (and the node) to turn cumulative CPU time into a
 * rate when the runtime does not report one.
 */
export class StatsCollector {
  readonly #previous = new Map<string, { ns: number; at: number }>();

  constructor(
    private readonly cri: CriClient,
    private readonly nodeName: string,
    private readonly now: () => number,
    private readonly host: HostReader = procReader,
  ) {}

  #rate(key: string, usageNs: number, atNs: number): number | undefined {
    const prev = this.#previous.get(key);
    this.#previous.set(key, { ns: usageNs, at: atNs });
    if (!prev || atNs <= prev.at || usageNs < prev.ns) return undefined;
    return Math.round(((usageNs - prev.ns) / (atNs - prev.at)) * 1e9);
  }

  /**
   * The stats summary, as kubelet's `/stats/summary` answers it. `signal` (the agent's shutdown)
   * cancels the runtime's lists: a 503.
   */
  async summary(signal?: AbortSignal): Promise<Summary> {
    const [stats, containers, sandboxes] = await Promise.all([
      this.cri.listContainerStats(undefined, signal),
      this.cri.listContainers(undefined, signal),
      this.cri.listPodSandbox(undefined, signal),
    ]);
    const createdOf = new Map(containers.map((c) => [c.id, c.createdAt]));
    const podStart = new Map(sandboxes.map((s) => [s.labels[POD_UID] ?? '', s.createdAt]));
    const nowMs = this.now();
    const nowIso = new Date(nowMs).toISOString();
    const seen = new Set<string>();

    const pods = new Map<string, PodSummary>();
    for (const s of stats) this.#addContainer(pods, s, createdOf, podStart, nowMs, seen);
    for (const key of this.#previous.keys()) if (key !== 'node' && !seen.has(key)) this.#previous.delete(key);
    for (const p of pods.values()) {
      p.cpu = {
        time: nowIso,
        usageCoreNanoSeconds: p.containers.reduce((a, c) => a + c.cpu.usageCoreNanoSeconds, 0),
        usageNanoCores: p.containers.reduce((a, c) => a + (c.cpu.usageNanoCores ?? 0), 0),
      };
      p.memory = {
        time: nowIso,
        workingSetBytes: p.containers.reduce((a, c) => a + c.memory.workingSetBytes, 0),
        usageBytes: p.containers.reduce((a, c) => a + (c.memory.usageBytes ?? 0), 0),
        rssBytes: p.containers.reduce((a, c) => a + (c.memory.rssBytes ?? 0), 0),
      };
    }

    const cpuNs = nodeCpuNs(this.host.procStat());
    const mem = nodeMemory(this.host.meminfo());
    const nanoCores = this.#rate('node', cpuNs, nowMs * 1e6);
    return {
      node: {
        nodeName: this.nodeName,
        startTime: new Date(nowMs - this.host.uptimeSeconds() * 1000).toISOString(),
        cpu: {
          time: nowIso,
          usageCoreNanoSeconds: cpuNs,
          ...(nanoCores !== undefined ? { usageNanoCores: nanoCores } : {}),
        },
        memory: {
          time: nowIso,
          availableBytes: mem.available,
          usageBytes: mem.total - mem.free,
          workingSetBytes: mem.total - mem.available,
        },
        systemContainers: [],
      },
      pods: [...pods.values()],
    };
  }

  #addContainer(
    pods: Map<string, PodSummary>,
    s: ContainerStats,
    createdOf: Map<string, string>,
    podStart: Map<string, string>,
    nowMs: number,
    seen: Set<string>,
  ): void {
    const labels = s.attributes?.labels ?? {};
    const uid = labels[POD_UID];
    const name = labels[CONTAINER_NAME] ?? s.attributes?.metadata?.name;
    if (!uid || !name || !s.attributes) return;
    let pod = pods.get(uid);
    if (!pod) {
      const started = podStart.get(uid);
      pod = {
        podRef: { name: labels[POD_NAME] ?? '', namespace: labels[POD_NAMESPACE] ?? '', uid },
        ...(started ? { startTime: iso(started) } : {}),
        containers: [],
        cpu: { time: '', usageCoreNanoSeconds: 0 },
        memory: { time: '', workingSetBytes: 0 },
      };
      pods.set(uid, pod);
    }
    const id = s.attributes.id;
    seen.add(id);
    const cpuAt = s.cpu?.timestamp && s.cpu.timestamp !== '0' ? Number(s.cpu.timestamp) : nowMs * 1e6;
    const usage = num(s.cpu?.usageCoreNanoSeconds) ?? 0;
    const reported = num(s.cpu?.usageNanoCores);
    const computed = this.#rate(id, usage, cpuAt);
    const nanoCores = reported || computed;
    const memAt =
      s.memory?.timestamp && s.memory.timestamp !== '0'
        ? iso(s.memory.timestamp)
        : new Date(nowMs).toISOString();
    const created = createdOf.get(id);
    // Two instances of one container (a restart in progress): the newest wins.
    pod.containers = pod.containers.filter((c) => c.name !== name);
    pod.containers.push({
      name,
      ...(created ? { startTime: iso(created) } : {}),
      cpu: {
        time: iso(cpuAt),
        usageCoreNanoSeconds: usage,
        ...(nanoCores !== undefined ? { usageNanoCores: nanoCores } : {}),
      },
      memory: {
        time: memAt,
        workingSetBytes: num(s.memory?.workingSetBytes) ?? 0,
        ...(s.memory?.usageBytes ? { usageBytes: num(s.memory.usageBytes) } : {}),
        ...(s.memory?.availableBytes ? { availableBytes: num(s.memory.availableBytes) } : {}),
        ...(s.memory?.rssBytes ? { rssBytes: num(s.memory.rssBytes) } : {}),
        ...(s.memory?.pageFaults ? { pageFaults: num(s.memory.pageFaults) } : {}),
        ...(s.memory?.majorPageFaults ? { majorPageFaults: num(s.memory.majorPageFaults) } : {}),
      },
      ...(s.writableLayer
        ? {
            rootfs: {
              time: iso(s.writableLayer.timestamp || String(nowMs * 1e6)),
              ...(s.writableLayer.usedBytes ? { usedBytes: num(s.writableLayer.usedBytes) } : {}),
              ...(s.writableLayer.inodesUsed ? { inodesUsed: num(s.writableLayer.inodesUsed) } : {}),
            },
          }
        : {}),
    });
  }
}

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** kubelet's resource metrics (`/metrics/resource`) in the Prometheus text format, from a summary. */
export function resourceMetrics(s: Summary): string {
  const out: string[] = [];
  const family = (name: string, type: string, help: string, samples: [string, number, string][]) => {
    out.push(`# HELP ${name} [ALPHA] ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value, time] of samples) out.push(`${name}${labels} ${value} ${Date.parse(time)}`);
  };
  const containers = s.pods.flatMap((p) =>
    p.containers.map((c) => ({
      labels: `{container="${esc(c.name)}",namespace="${esc(p.podRef.namespace)}",pod="${esc(p.podRef.name)}"}`,
      c,
    })),
  );
  const podLabels = (p: PodSummary) => `{namespace="${esc(p.podRef.namespace)}",pod="${esc(p.podRef.name)}"}`;
  family(
    'container_cpu_usage_seconds_total',
    'counter',
    'Cumulative cpu time consumed by the container in core-seconds',
    containers.map(({ labels, c }) => [labels, c.cpu.usageCoreNanoSeconds / 1e9, c.cpu.time]),
  );
  family(
    'container_memory_working_set_bytes',
    'gauge',
    'Current working set of the container in bytes',
    containers.map(({ labels, c }) => [labels, c.memory.workingSetBytes, c.memory.time]),
  );
  family(
    'container_start_time_seconds',
    'gauge',
    'Start time of the container since unix epoch in seconds',
    containers
      .filter(({ c }) => c.startTime)
      .map(({ labels, c }) => [labels, Date.parse(c.startTime!) / 1000, c.startTime!]),
  );
  family(
    'node_cpu_usage_seconds_total',
    'counter',
    'Cumulative cpu time consumed by the node in core-seconds',
    [['', s.node.cpu.usageCoreNanoSeconds / 1e9, s.node.cpu.time]],
  );
  family('node_memory_working_set_bytes', 'gauge', 'Current working set of the node in bytes', [
    ['', s.node.memory.workingSetBytes, s.node.memory.time],
  ]);
  family(
    'pod_cpu_usage_seconds_total',
    'counter',
    'Cumulative cpu time consumed by the pod in core-seconds',
    s.pods.map((p) => [podLabels(p), p.cpu.usageCoreNanoSeconds / 1e9, p.cpu.time]),
  );
  family(
    'pod_memory_working_set_bytes',
    'gauge',
    'Current working set of the pod in bytes',
    s.pods.map((p) => [podLabels(p), p.memory.workingSetBytes, p.memory.time]),
  );
  out.push(
    '# HELP scrape_error [ALPHA] 1 if there was an error while getting container metrics, 0 otherwise',
    '# TYPE scrape_error gauge',
    'scrape_error 0',
  );
  return `${out.join('\n')}\n`;
}
