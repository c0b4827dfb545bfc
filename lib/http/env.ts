import type { Context } from 'hono';
import type { AuthConfig } from '#lib/auth/authenticate.ts';
import type { Principal } from '#lib/auth/roles.ts';
import type { CloudContext } from '#lib/cloud/context.ts';
import type { CriClient } from '#lib/cri/client.ts';
import type { DeviceManager } from '#lib/dmi/manager.ts';
import type { Logger } from '#lib/log.ts';
import type { Metrics } from '#lib/metrics.ts';
import type { MqttStatus } from '#lib/mqtt/bridge.ts';
import type { NetworkState } from '#lib/pods/runtime/network.ts';
import type { StatsCollector } from '#lib/pods/runtime/stats.ts';
import type { RestartRequests } from '#lib/pods/worker/restart-requests.ts';
import type { Store } from '#lib/store/index.ts';
import type { ModuleSnapshot } from '#lib/supervisor/modules.ts';
import type { Limits } from './limits.ts';

/** Everything a route handler may use; built by `bin/outpost.ts`, replaced by tests. */
export interface Deps {
  /** Tokens and client certificates; empty means loopback-only anonymous access. */
  auth: AuthConfig;
  /** Stream caps, rate limit and body size limit. */
  limits: Limits;
  store: Store;
  log: Logger;
  now: () => number;
  nodeName: string;
  /** --node-ip: the address the Node reports (InternalIP); detected from the default route without it. */
  nodeIp?: string | undefined;
  /** Aborted when the server shuts down, so long-lived streams (watch, logs -f) end cleanly. */
  shutdown: AbortSignal;
  /** Per-module state, for /healthz, /readyz and metrics. */
  health: () => ModuleSnapshot[];
  /** The container runtime, when one is configured (operations answer 503 while it is down). */
  cri?: CriClient | undefined;
  /** The runtime's NetworkReady condition (RuntimeStatus), once known, for /readyz?verbose. */
  runtimeNetwork?: (() => NetworkState | undefined) | undefined;
  /** Devices over DMI: edits go through the device's mapper (answers 503 while it is unreachable). */
  dmi?: DeviceManager | undefined;
  /** Containers stopped by a restart request, which the lifecycle manager restarts without back-off. */
  restarts?: RestartRequests | undefined;
  /** The cloud link, with `serve --cloud` (link state for health and metrics, pass-through). */
  cloud?: CloudContext | undefined;
  /** Container and node usage from CRI stats and /proc, for metrics.k8s.io (`kubectl top`). */
  stats?: StatsCollector | undefined;
  /** Prometheus metrics (`/metrics`, HTTP request counts); absent in tests that do not need them. */
  metrics?: Metrics | undefined;
  /** The MQTT bridge's broker link, when `--mqtt` is set (the dashboard shows it). */
  mqtt?: (() => MqttStatus) | undefined;
  /**
   * While the agent's parts after the API are still loading (runtime, devices, MQTT: the fields
   * above they fill in): requests other than cached reads wait for it (lib/app.ts).
   */
  starting?: Promise<void> | undefined;
}

/** Per-request values set by middleware: who is calling, and what the audit trail should record. */
export interface RequestVars {
  principal?: Principal;
  auditDetail?: unknown;
}

export type AppEnv = { Variables: Deps & RequestVars };
export type AppContext = Context<AppEnv>;
