import type { KubeObject } from '#lib/kube/types.ts';
import type { ApiRequest } from './api.ts';
import type { CloudContext } from './context.ts';
import { GoneError, type ListWatch, type WatchEvent } from './reflector.ts';

/**
 * List and watch one collection through the cloud context's transport: `path` is the collection
 * (`/api/v1/pods`, `/api/v1/namespaces/demo/configmaps`), `fieldSelector` narrows it as the Node
 * authorizer requires (`spec.nodeName=edge-1`, `metadata.name=app-config`); empty: the whole collection.
 */
export function httpListWatch(ctx: CloudContext, path: string, fieldSelector: string): ListWatch {
  return {
    async list() {
      const items: KubeObject[] = [];
      let cont: string | undefined;
      let resourceVersion = '';
      do {
        // resourceVersion=0 serves the first page from the watch cache, as kubelet's reflector asks.
        const page = await ctx.request<{
          items?: KubeObject[];
          metadata: { resourceVersion: string; continue?: string };
        }>(path, {
          query: {
            fieldSelector: fieldSelector || undefined,
            limit: 500,
            ...(cont ? { continue: cont } : { resourceVersion: '0' }),
          },
        });
        items.push(...(page.items ?? []));
        resourceVersion = page.metadata.resourceVersion;
        cont = page.metadata.continue || undefined;
      } while (cont);
      return { items, resourceVersion };
    },
    async *watch(resourceVersion, signal) {
      const res = await ctx.raw(path, {
        query: {
          watch: true,
          allowWatchBookmarks: true,
          resourceVersion,
          fieldSelector: fieldSelector || undefined,
          // Spread like kubelet's 5-10 minutes, so a fleet's watches do not restart in step.
          timeoutSeconds: 300 + Math.floor(Math.random() * 300),
        },
        signal,
      });
      if (res.statusCode === 410) {
        await res.body.dump();
        throw new GoneError(`watch ${path}: 410 Gone`);
      }
      if (res.statusCode >= 300) {
        const text = await res.body.text().catch(() => '');
        throw new Error(`watch ${path}: HTTP ${res.statusCode} ${text.slice(0, 200)}`);
      }
      try {
        yield* ndjson(res.body, signal);
      } catch (err) {
        // A watch cut mid-stream (reset, dropped connection) is a failed watch: offline at once.
        if (!signal.aborted) ctx.link.markOffline(err);
        throw err;
      }
    },
  };
}

/** The watch stream's newline-delimited JSON events. A cut stream throws (the link is down). */
async function* ndjson(
  body: AsyncIterable<Buffer | string>,
  signal: AbortSignal,
): AsyncGenerator<WatchEvent> {
  let buf = '';
  for await (const chunk of body) {
    buf += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    let nl = buf.indexOf('\n');
    while (nl >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) yield JSON.parse(line) as WatchEvent;
      nl = buf.indexOf('\n');
    }
    if (signal.aborted) return;
  }
}

/** The ApiRequest the outbox sender uses, over the cloud context (any HTTP status resolves). */
export function contextRequest(ctx: CloudContext): ApiRequest {
  return async (method, path, body, contentType) => {
    const res = await ctx.raw(path, {
      method,
      ...(body !== undefined ? { body } : {}),
      ...(contentType ? { contentType } : {}),
    });
    const text = await res.body.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    return { status: res.statusCode, body: parsed };
  };
}
