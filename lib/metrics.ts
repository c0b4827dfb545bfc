// Prometheus metrics of one agent: a registry per agent (passed through deps, never module-global,
// so tests and several agents in one process do not share counters). Names follow the Prometheus
// conventions: `_total` counters, `_seconds` histograms, base units.

import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Sqlite } from '#db/sqlite.ts';
import { aroundTransactions } from '#db/transactions.ts';
import type { Pod } from '#lib/kube/types.ts';
import type { ModuleSnapshot, ModuleState } from '#lib/supervisor/modules.ts';
import { registerProcessMetrics } from './process-metrics.ts';

export const MODULE_STATES: readonly ModuleState[] = [
  'starting',
  'running',
  'backoff',
  'failed',
  'stopped',
  'degraded',
];

/** What the agent reports into; the HTTP middleware, the CRI client and the metabase call these. */
export interface Metrics {
  readonly registry: Registry;
  /** Stops what samples in the background (the event loop's delay); the registry still answers. */
  close(): void;
  /** One answered HTTP request; `route` is the matched route pattern, never the raw URL. */
  http(method: string, route: string, code: number, seconds: number): void;
  /** One CRI call; `code` is the gRPC status name (`OK`, `UNAVAILABLE`, ...). */
  cri(method: string, code: string, seconds: number): void;
  /** One committed (or rolled back) metabase write transaction, fsync included. */
  metabaseWrite(seconds: number): void;
  /** A module changed state (Supervisor `change` event). */
  module(m: ModuleSnapshot): void;
  /** A damaged metabase file was replaced at start: from a snapshot, or rebuilt without one. */
  metabaseRecovery(outcome: 'snapshot' | 'rebuilt'): void;
  /** A metabase snapshot was written and verified (`ok`) or not (`failed`). */
  snapshot(result: 'ok' | 'failed', at: number): void;
}

/** The cloud link as /metrics shows it. */
export interface CloudLinkFigures {
  online: boolean;
  lastContact: number | undefined;
  outbox: { depth: number; oldestAgeSeconds: number } | undefined;
}

export interface MetricsSources {
  /** The pods to count by phase and container restarts, read at scrape time. */
  pods?: () => readonly Pod[];
  /** The cloud link's state, read at scrape time (with `serve --cloud`). */
  cloud?: () => CloudLinkFigures;
  /** Whether metabase writes fail for lack of space, read at scrape time. */
  diskFull?: () => boolean;
  /** Node's process metrics (CPU, RSS, event loop lag, GC); default true. */
  process?: boolean;
}

const LATENCY = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Creates the registry and the agent's metrics in it. */
export function createMetrics(sources: MetricsSources = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const stopProcessMetrics = sources.process !== false ? registerProcessMetrics(registry) : () => {};

  const moduleState = new Gauge({
    name: 'outpost_module_state',
    help: 'Supervised module state: 1 for the state the module is in, 0 for the others.',
    labelNames: ['module', 'state'],
    registers,
  });
  const moduleRestarts = new Counter({
    name: 'outpost_module_restarts_total',
    help: 'Restarts of a supervised module after a failure or a return.',
    labelNames: ['module'],
    registers,
  });
  const httpRequests = new Counter({
    name: 'outpost_http_requests_total',
    help: 'HTTP requests answered, by method, matched route pattern and status code.',
    labelNames: ['method', 'route', 'code'],
    registers,
  });
  const httpDuration = new Histogram({
    name: 'outpost_http_request_duration_seconds',
    help: 'Time to the response headers (for watch and log streams: until the stream starts).',
    labelNames: ['method', 'route', 'code'],
    buckets: LATENCY,
    registers,
  });
  const criDuration = new Histogram({
    name: 'outpost_cri_call_duration_seconds',
    help: 'CRI call latency by RPC and gRPC status.',
    labelNames: ['method', 'code'],
    buckets: LATENCY,
    registers,
  });
  const criErrors = new Counter({
    name: 'outpost_cri_call_errors_total',
    help: 'Failed CRI calls by RPC and gRPC status.',
    labelNames: ['method', 'code'],
    registers,
  });
  const metabaseWrites = new Histogram({
    name: 'outpost_metabase_write_duration_seconds',
    help: 'Metabase write transaction latency, commit and fsync included.',
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers,
  });
  const recoveries = new Counter({
    name: 'outpost_metabase_recoveries_total',
    help: 'Damaged metabase files replaced at start, by outcome (snapshot: restored from one; rebuilt: none verified).',
    labelNames: ['outcome'],
    registers,
  });
  for (const outcome of ['snapshot', 'rebuilt']) recoveries.inc({ outcome }, 0);
  const snapshots = new Counter({
    name: 'outpost_metabase_snapshots_total',
    help: 'Metabase snapshots attempted, by result (ok: written and verified).',
    labelNames: ['result'],
    registers,
  });
  for (const result of ['ok', 'failed']) snapshots.inc({ result }, 0);
  const lastSnapshot = new Gauge({
    name: 'outpost_metabase_last_snapshot_timestamp_seconds',
    help: 'When the last verified metabase snapshot was taken (Unix time).',
    registers,
  });
  const diskFull = sources.diskFull;
  if (diskFull)
    new Gauge({
      name: 'outpost_disk_pressure',
      help: 'Whether metabase writes fail for lack of space in the data directory (1) or not (0).',
      registers,
      collect() {
        this.set(diskFull() ? 1 : 0);
      },
    });
  const podsByPhase = sources.pods;
  if (podsByPhase) {
    const phases = new Gauge({
      name: 'outpost_pods',
      help: 'Pods in the metabase by phase.',
      labelNames: ['phase'],
      registers,
      collect() {
        this.reset();
        for (const p of ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown']) this.set({ phase: p }, 0);
        for (const pod of podsByPhase()) this.inc({ phase: pod.status?.phase ?? 'Pending' });
      },
    });
    const restarts = new Counter({
      name: 'outpost_pod_container_restarts_total',
      help: 'Container restarts as the pod status reports them (restartCount), per container.',
      labelNames: ['namespace', 'pod', 'container'],
      registers,
      collect() {
        this.reset();
        for (const pod of podsByPhase()) {
          const { namespace = '', name = '' } = pod.metadata;
          const all = [
            ...(pod.status?.initContainerStatuses ?? []),
            ...(pod.status?.containerStatuses ?? []),
          ];
          for (const s of all) this.inc({ namespace, pod: name, container: s.name }, s.restartCount ?? 0);
        }
      },
    });
    void phases;
    void restarts;
  }

  const cloud = sources.cloud;
  if (cloud) {
    const gauge = (name: string, help: string, read: (c: CloudLinkFigures) => number | undefined) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          const v = read(cloud());
          if (v === undefined) this.reset();
          else this.set(v);
        },
      });
    gauge('outpost_cloud_link_online', 'Whether the link to the API server is up (1) or down (0).', (c) =>
      c.online ? 1 : 0,
    );
    gauge(
      'outpost_cloud_last_contact_timestamp_seconds',
      'When the API server last answered (Unix time).',
      (c) => (c.lastContact === undefined ? undefined : c.lastContact / 1000),
    );
    gauge(
      'outpost_cloud_outbox_depth',
      'Entries waiting in the outbox for the API server.',
      (c) => c.outbox?.depth,
    );
    gauge(
      'outpost_cloud_outbox_oldest_age_seconds',
      'Age of the oldest entry waiting in the outbox (0 when empty).',
      (c) => c.outbox?.oldestAgeSeconds,
    );
  }

  const seenRestarts = new Map<string, number>();
  return {
    registry,
    close: stopProcessMetrics,
    http(method, route, code, seconds) {
      const labels = { method, route, code: String(code) };
      httpRequests.inc(labels);
      httpDuration.observe(labels, seconds);
    },
    cri(method, code, seconds) {
      criDuration.observe({ method, code }, seconds);
      if (code !== 'OK') criErrors.inc({ method, code });
    },
    metabaseWrite(seconds) {
      metabaseWrites.observe(seconds);
    },
    metabaseRecovery(outcome) {
      recoveries.inc({ outcome });
    },
    snapshot(result, at) {
      snapshots.inc({ result });
      if (result === 'ok') lastSnapshot.set(at / 1000);
    },
    module(m) {
      for (const s of MODULE_STATES) moduleState.set({ module: m.name, state: s }, s === m.state ? 1 : 0);
      const before = seenRestarts.get(m.name) ?? 0;
      if (m.restarts > before) moduleRestarts.inc({ module: m.name }, m.restarts - before);
      else if (!seenRestarts.has(m.name)) moduleRestarts.inc({ module: m.name }, 0);
      seenRestarts.set(m.name, Math.max(before, m.restarts));
    },
  };
}

/**
 * Times every outermost write transaction on `sqlite` (the stores all write through
 * `sqlite.transaction(fn)()`); nested ones are savepoints inside a timed outer one.
 */
export function timeMetabaseWrites(sqlite: Sqlite, observe: (seconds: number) => void): void {
  aroundTransactions(sqlite, (run) => {
    const started = performance.now();
    try {
      return run();
    } finally {
      observe((performance.now() - started) / 1000);
    }
  });
}
