import { Hono, type MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { routes } from '../routes/_table.gen.ts';
import type { AppEnv, Deps } from './http/env.ts';
import { httpMetrics } from './http/metrics.ts';
import { internal, StatusError } from './kube/status.ts';

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type Method = (typeof METHODS)[number];

/** Builds the HTTP app over the given dependencies: one middleware sets them, every error is a Status. */
export function createApp(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  if (deps.metrics) app.use(httpMetrics(deps.metrics));
  app.use(async (c, next) => {
    for (const [key, value] of Object.entries(deps)) c.set(key as keyof Deps, value as never);
    await next();
  });
  for (const route of routes) {
    for (const method of METHODS) {
      const handlers = route.module[method];
      if (!handlers) continue;
      const chain = (Array.isArray(handlers) ? handlers : [handlers]) as MiddlewareHandler<AppEnv>[];
      const [first, ...rest] = chain;
      app.on(method, route.path, first!, ...rest);
    }
  }
  app.notFound((c) => {
    const path = c.req.path;
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
    let status: StatusError;
    if (err instanceof StatusError) status = err;
    else if (err instanceof HTTPException) {
      const code = err.status;
      const reason = code === 413 ? 'RequestEntityTooLarge' : code >= 500 ? 'InternalError' : 'BadRequest';
      status = new StatusError(code, reason, err.message || reason);
    } else {
      deps.log.error({ err, method: c.req.method, path: c.req.path }, 'request failed');
      status = internal((err as Error)?.message ?? String(err));
    }
    return c.json(status.toStatus(), status.code as 400);
  });
  return app;
}
