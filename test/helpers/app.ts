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

/** A JSON request through app.request(): the status code and the parsed body. */
export function jsonCaller(app: ReturnType<typeof createApp>) {
  return async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = { 'content-type': 'application/json' },
  ) => {
    const res = await app.request(path, {
      method,
      headers,
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    // biome-ignore lint/suspicious/noExplicitAny: test bodies are read loosely.
    return { code: res.status, body: (await res.json()) as Record<string, any> };
  };
}
