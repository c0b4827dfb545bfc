import type { Context } from 'hono';
import type { Logger } from '../log.ts';
import type { Store } from '../store/index.ts';

/** Everything a route handler may use; built by `bin/outpost.ts`, replaced by tests. */
export interface Deps {
  store: Store;
  log: Logger;
  now: () => number;
  nodeName: string;
  /** Aborted when the server shuts down, so long-lived streams (watch, logs -f) end cleanly. */
  shutdown: AbortSignal;
  /** Per-module health, for /healthz and /readyz. */
  health: () => { name: string; ok: boolean; detail?: string; readiness?: boolean }[];
}

export type AppEnv = { Variables: Deps };
export type AppContext = Context<AppEnv>;
