import { openMetabase } from '#db/open.ts';
import { type AppDeps, createApp } from '#lib/app.ts';
import { silentLogger } from '#lib/log.ts';
import { createStore, type Store } from '#lib/store/index.ts';

/** An app over an in-memory metabase, no runtime: for tests that go through app.request(). */
export function testApp(extra: Partial<AppDeps> = {}): { app: ReturnType<typeof createApp>; store: Store } {
  const store = createStore(openMetabase(':memory:'), { host: 'edge-1' });
  const app = createApp({
    store,
    log: silentLogger,
    now: Date.now,
    nodeName: 'edge-1',
    shutdown: new AbortController().signal,
    health: () => [],
    ...extra,
  });
  return { app, store };
}
