import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { Metrics } from '#lib/metrics.ts';
import type { AppEnv } from './env.ts';

/**
 * The route pattern that answered (`/api/v1/namespaces/:ns/pods/:name`): the last matched route
 * that is not a middleware (those are registered for every method). Labels stay bounded whatever
 * URLs clients send; a request no route matched is `unmatched`.
 */
export function routeLabel(c: Context): string {
  const matched = matchedRoutes(c);
  for (let i = matched.length - 1; i >= 0; i--) {
    const r = matched[i]!;
    if (r.method !== 'ALL') return r.path;
  }
  return 'unmatched';
}

/** Counts and times every request by method, route pattern and status code. */
export function httpMetrics(metrics: Metrics): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      // Hono renders thrown errors through onError before next() returns, so c.res is final.
      metrics.http(c.req.method, routeLabel(c), c.res.status, (performance.now() - started) / 1000);
    }
  };
}
