import { Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import type { AppEnv, Deps } from '#lib/http/env.ts';
import { guard } from '#lib/http/guard.ts';
import { defaultLimits } from '#lib/http/limits.ts';
import { httpMetrics } from '#lib/http/metrics.ts';
import { mergeCloudDiscovery, passThrough } from '#lib/http/passthrough.ts';
import { internal, StatusError, tooLarge } from '#lib/kube/status.ts';
import type { DiskPressure } from '#lib/store/disk.ts';
import { routes } from '#routes/_table.gen.ts';

/** Dependencies as callers give them: auth and limits default to loopback-anonymous and the default caps. */
export type AppDeps = Omit<Deps, 'auth' | 'limits'> & Partial<Pick<Deps, 'auth' | 'limits'>>;

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type Method = (typeof METHODS)[number];

/** Builds the HTTP app over the given dependencies: one middleware sets them, every error is a Status. */
export function createApp(given: AppDeps): Hono<AppEnv> {
  const deps: Deps = { ...given, auth: given.auth ?? {}, limits: given.limits ?? defaultLimits(given.now) };
  const app = new Hono<AppEnv>();
  if (deps.metrics) app.use(httpMetrics(deps.metrics));
  const entries = Object.entries(deps) as [keyof Deps, never][];
  app.use(async (c, next) => {
    for (const [key, value] of entries) c.set(key, value);
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
    for (const method of METHODS) {
      const handlers = route.module[method];
      if (!handlers) continue;
      const chain = (Array.isArray(handlers) ? handlers : [handlers]) as MiddlewareHandler<AppEnv>[];
      const [first, ...rest] = chain;
      app.on(method, route.path, first!, ...rest);
      // With a trailing slash too (`/api/`, `/version/`), as on kube-apiserver; the dashboard
      // lives at /ui/ (its route file is routes/ui/index.ts, path /ui, which redirects there).
      app.on(method, `${route.path}/`, first!, ...rest);
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
