import { type Context, Hono, type MiddlewareHandler, type Next } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import type { AppEnv, Deps } from '#lib/http/env.ts';
import { guard } from '#lib/http/guard.ts';
import { defaultLimits } from '#lib/http/limits.ts';
import { httpMetrics } from '#lib/http/metrics.ts';
import { mergeCloudDiscovery, passThrough } from '#lib/http/passthrough.ts';
import type { RouteEntry, RouteModule } from '#lib/http/route.ts';
import { MemoRouter } from '#lib/http/router.ts';
import { internal, StatusError, tooLarge } from '#lib/kube/status.ts';
import type { DiskPressure } from '#lib/store/disk.ts';
import { routes } from '#routes/_table.gen.ts';

/** Dependencies as callers give them: auth and limits default to loopback-anonymous and the default caps. */
export type AppDeps = Omit<Deps, 'auth' | 'limits'> & Partial<Pick<Deps, 'auth' | 'limits'>>;

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type Method = (typeof METHODS)[number];

/** Builds the HTTP app over the given dependencies: one middleware sets them, every error is a Status. */
export function createApp(given: AppDeps): Hono<AppEnv> {
  // The caller's object itself, not a copy: the agent fills in what loads after the API listens.
  given.auth ??= {};
  given.limits ??= defaultLimits(given.now);
  const deps = given as Deps;
  const app = new Hono<AppEnv>({ router: new MemoRouter() });
  if (deps.metrics) app.use(httpMetrics(deps.metrics));
  let entries = Object.entries(deps) as [keyof Deps, never][];
  // The agent fills in what loads after the API listens, then resolves `starting`: read them again
  // (this reaction runs before those of the requests that waited).
  void deps.starting?.then(() => {
    entries = Object.entries(deps) as [keyof Deps, never][];
  });
  app.use(async (c, next) => {
    if (deps.starting && !isCachedRead(c.req.method, c.req.path, c.req.header('upgrade')))
      await deps.starting;
    // Indexed: unoptimized code (the unit's --no-opt) allocates an iterator and its results for
    // every for...of and destructuring, and this runs for every request.
    for (let i = 0; i < entries.length; i++) c.set(entries[i]![0], entries[i]![1]);
    await next();
  });
  app.use(guard());
  const limitBody = bodyLimit({
    maxSize: deps.limits.maxBodyBytes,
    onError: () => {
      throw tooLarge(`request body exceeds the limit of ${deps.limits.maxBodyBytes} bytes`);
    },
  });
  // GET and HEAD carry no body, and on Node asking a request for its body builds a whole fetch
  // Request (Headers, AbortController): the largest per-request cost of a read.
  app.use((c, next) => (c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : limitBody(c, next)));
  if (deps.cloud) app.use(mergeCloudDiscovery());
  for (const route of routes) {
    const load = lazyModule(route);
    for (const method of route.methods) {
      const handler = lazyHandler(load, method);
      app.on(method, route.path, handler);
      // With a trailing slash too (`/api/`, `/version/`), as on kube-apiserver; the dashboard
      // lives at /ui/ (its route file is routes/ui/index.ts, path /ui, which redirects there).
      app.on(method, `${route.path}/`, handler);
    }
  }
  app.notFound(async (c) => {
    const path = c.req.path;
    // With the cloud link, reads the metabase does not serve go to the API server.
    try {
      const forwarded = deps.cloud ? await passThrough(c) : undefined;
      if (forwarded) return forwarded;
    } catch (e) {
      const status = errorStatus(e, deps.log, c.req.method, path);
      return c.json(status.toStatus(), status.code as 503);
    }
    const known = routes.some((r) => r.pattern.test(path));
    const err = known
      ? new StatusError(
          405,
          'MethodNotAllowed',
          `the server does not allow this method on the requested resource`,
        )
      : new StatusError(404, 'NotFound', 'the server could not find the requested resource');
    return c.json(err.toStatus(), err.code as 404);
  });
  app.onError((err, c) => {
    const status = errorStatus(err, deps.log, c.req.method, c.req.path, deps.store.disk);
    // As the API server: a 429 (and a 503 that knows) says when to come back.
    const retry = status.details?.retryAfterSeconds;
    if (retry !== undefined) c.header('Retry-After', String(retry));
    return c.json(status.toStatus(), status.code as 400);
  });
  return app;
}

/** Core reads that ask the runtime, not only the metabase: logs, exec, port forwarding, the Node. */
const LIVE_READ = /^\/api\/v1\/nodes(\/|$)|\/(log|exec|attach|portforward|proxy)\/?$/;

/**
 * A request answered from the metabase alone, at once while the agent's later parts are still
 * loading: reads of core objects (`/api/v1/...` but those of LIVE_READ), discovery, version and
 * health. Everything else waits for `Deps.starting`.
 */
export function isCachedRead(method: string, path: string, upgrade?: string): boolean {
  if ((method !== 'GET' && method !== 'HEAD') || upgrade) return false;
  if (path.startsWith('/api/v1/')) return !LIVE_READ.test(path);
  return /^\/(api|apis|version|healthz|livez|readyz)\/?$/.test(path);
}

/** A route file imported once, on the first request that needs it (a failed import is tried again). */
function lazyModule(route: RouteEntry): () => Promise<RouteModule> {
  let loading: Promise<RouteModule> | undefined;
  return () => {
    loading ??= route.load().catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
    return loading;
  };
}

/**
 * One method of a route file as a single handler: its chain (validators, then the handler) runs as
 * Hono runs a chain, each handler's Response becoming the answer.
 */
function lazyHandler(load: () => Promise<RouteModule>, method: Method): MiddlewareHandler<AppEnv> {
  let chain: readonly MiddlewareHandler<AppEnv>[] | undefined;
  const run = async (c: Context<AppEnv>, next: Next, i: number): Promise<void> => {
    const handler = chain![i];
    if (!handler) return next();
    const res = await handler(c, () => run(c, next, i + 1));
    if (res instanceof Response && !c.finalized) c.res = res;
  };
  return async (c, next) => {
    if (!chain) {
      const handlers = (await load())[method];
      if (!handlers) throw internal(`the route file exports no ${method} handler`);
      chain = (Array.isArray(handlers) ? handlers : [handlers]) as MiddlewareHandler<AppEnv>[];
    }
    await run(c, next, 0);
  };
}

/** The Status an error is answered with; anything unexpected is logged and becomes a 500. */
export function errorStatus(
  err: unknown,
  log: Deps['log'],
  method: string,
  path: string,
  disk?: DiskPressure,
): StatusError {
  if (err instanceof StatusError) return err;
  // A full disk is the node's condition, not Outpost's fault: 503 naming the place and the space.
  if (disk?.noteError(err)) return disk.unavailable();
  if (err instanceof HTTPException) {
    const code = err.status;
    const reason = code === 413 ? 'RequestEntityTooLarge' : code >= 500 ? 'InternalError' : 'BadRequest';
    return new StatusError(code, reason, err.message || reason);
  }
  log.error({ err, method, path }, 'request failed');
  return internal((err as Error)?.message ?? String(err));
}
