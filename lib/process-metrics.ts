// Node's process metrics (`process_*`, `nodejs_*`): prom-client's default metrics, each registered
// by its own module as `collectDefaultMetrics` does, except the event loop's lag, which
// lib/loop-delay.ts samples instead of Node's 10 ms native histogram (docs/performance.md). The
// names, help texts and aggregators stay prom-client's; a unit test compares the names with
// `collectDefaultMetrics`' so that a prom-client upgrade that adds or drops one is seen.
import { Gauge, type Registry } from 'prom-client';
import gc from 'prom-client/lib/metrics/gc.js';
import heapSizeAndUsed from 'prom-client/lib/metrics/heapSizeAndUsed.js';
import heapSpacesSizeAndUsed from 'prom-client/lib/metrics/heapSpacesSizeAndUsed.js';
import osMemoryHeap from 'prom-client/lib/metrics/osMemoryHeap.js';
import processCpuTotal from 'prom-client/lib/metrics/processCpuTotal.js';
import processHandles from 'prom-client/lib/metrics/processHandles.js';
import processMaxFileDescriptors from 'prom-client/lib/metrics/processMaxFileDescriptors.js';
import processOpenFileDescriptors from 'prom-client/lib/metrics/processOpenFileDescriptors.js';
import processRequests from 'prom-client/lib/metrics/processRequests.js';
import processResources from 'prom-client/lib/metrics/processResources.js';
import processStartTime from 'prom-client/lib/metrics/processStartTime.js';
import version from 'prom-client/lib/metrics/version.js';
import { type LoopDelayFigures, sampleLoopDelay } from './loop-delay.ts';

const PROM_CLIENT_METRICS = [
  processCpuTotal,
  processStartTime,
  osMemoryHeap,
  processOpenFileDescriptors,
  processMaxFileDescriptors,
  // prom-client registers it only where Node has process.getActiveResourcesInfo (>= 17.3).
  ...(typeof process.getActiveResourcesInfo === 'function' ? [processResources] : []),
  processHandles,
  processRequests,
  heapSizeAndUsed,
  heapSpacesSizeAndUsed,
  version,
  gc,
];

/** The lag gauges prom-client's eventLoopLag module defines, with their help texts and aggregators. */
const LAG: [keyof LoopDelayFigures, string, string, 'min' | 'max' | 'average'][] = [
  ['min', 'nodejs_eventloop_lag_min_seconds', 'The minimum recorded event loop delay.', 'min'],
  ['max', 'nodejs_eventloop_lag_max_seconds', 'The maximum recorded event loop delay.', 'max'],
  ['mean', 'nodejs_eventloop_lag_mean_seconds', 'The mean of the recorded event loop delays.', 'average'],
  [
    'stddev',
    'nodejs_eventloop_lag_stddev_seconds',
    'The standard deviation of the recorded event loop delays.',
    'average',
  ],
  [
    'p50',
    'nodejs_eventloop_lag_p50_seconds',
    'The 50th percentile of the recorded event loop delays.',
    'average',
  ],
  [
    'p90',
    'nodejs_eventloop_lag_p90_seconds',
    'The 90th percentile of the recorded event loop delays.',
    'average',
  ],
  [
    'p99',
    'nodejs_eventloop_lag_p99_seconds',
    'The 99th percentile of the recorded event loop delays.',
    'average',
  ],
];

/** Registers the process metrics in `registry`; returns what stops the loop-delay sampler. */
export function registerProcessMetrics(registry: Registry): () => void {
  for (const metric of PROM_CLIENT_METRICS) metric(registry, {});
  const registers = [registry];
  const sampler = sampleLoopDelay();
  // As prom-client: the lag of one setImmediate at scrape time (read at the next scrape), and the
  // sampled figures since the previous scrape, whose window then starts anew.
  const lag: Gauge = new Gauge({
    name: 'nodejs_eventloop_lag_seconds',
    help: 'Lag of event loop in seconds.',
    registers,
    aggregator: 'average',
    collect() {
      const start = performance.now();
      setImmediate(() => lag.set((performance.now() - start) / 1000));
      const figures = sampler.figures();
      for (const [key, gauge] of gauges) gauge.set(figures[key]);
      sampler.reset();
    },
  });
  // Registered after the gauge whose collect sets them: a scrape reads metrics in that order.
  const gauges = LAG.map(
    ([key, name, help, aggregator]) => [key, new Gauge({ name, help, registers, aggregator })] as const,
  );
  return () => sampler.stop();
}
