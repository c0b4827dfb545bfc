import { statSync } from 'node:fs';
import { type Metabase, openMetabase } from '../db/open.ts';
import { createApp } from './app.ts';
import { ConfigError, parseListen, type ServeConfig } from './config.ts';
import type { Deps } from './http/env.ts';
import type { Logger } from './log.ts';
import { ManifestSync } from './manifests/sync.ts';
import { listen, type RunningServer } from './server.ts';
import { createStore, type Store } from './store/index.ts';
import { OUTPOST_VERSION } from './version.ts';

export interface Agent {
  url: string;
  store: Store;
  metabase: Metabase;
  manifests: ManifestSync | undefined;
  /** Graceful stop: streams end, in-flight requests finish, the metabase is closed. */
  close(): Promise<void>;
}

/** Starts Outpost's node agent: metabase, static manifests, the local API. */
export async function startAgent(config: ServeConfig, log: Logger, now: () => number = Date.now): Promise<Agent> {
  const started = now();
  const { host, port } = parseListen(config.listen);
  if (config.manifests) {
    try {
      if (!statSync(config.manifests).isDirectory()) throw new Error('not a directory');
    } catch (e) {
      throw new ConfigError(`--manifests ${config.manifests}: ${(e as Error).message}`);
    }
  }
  const metabase = openMetabase(config.dataDir, { durability: config.durability });
  const store = createStore(metabase, { host: config.nodeName, now });
  const shutdown = new AbortController();
  const deps: Deps = {
    store,
    log,
    now,
    nodeName: config.nodeName,
    shutdown: shutdown.signal,
    health: () => [{ name: 'metabase', ok: metabase.sqlite.open }],
  };
  let manifests: ManifestSync | undefined;
  if (config.manifests) {
    manifests = new ManifestSync({ dir: config.manifests, nodeName: config.nodeName, store, log: log.child({ module: 'manifests' }) });
    manifests.sync();
    manifests.watch((err) => log.error({ err }, 'manifest watch failed'));
  }
  let server: RunningServer;
  try {
    server = await listen(createApp(deps), host, port);
  } catch (e) {
    manifests?.close();
    metabase.close();
    throw new ConfigError(`--listen ${config.listen}: ${(e as Error).message}`);
  }
  log.info(
    { version: OUTPOST_VERSION, url: server.url, dataDir: config.dataDir, node: config.nodeName, startupMs: now() - started },
    'outpost serving',
  );
  return {
    url: server.url,
    store,
    metabase,
    manifests,
    async close() {
      shutdown.abort();
      manifests?.close();
      await server.close();
      metabase.close();
      log.info({}, 'outpost stopped');
    },
  };
}
