import { type HealthzKind, renderModuleHealthz } from '#lib/supervisor/healthz.ts';
import type { AppContext } from './env.ts';

/** `/healthz`, `/livez`, `/readyz` in the Kubernetes healthz text format, from the module states. */
export function healthAnswer(c: AppContext, kind: HealthzKind) {
  const verbose = c.req.query('verbose') !== undefined;
  const { status, body } = renderModuleHealthz(kind, c.var.health(), { verbose, now: c.var.now() });
  c.header('Content-Type', 'text/plain; charset=utf-8');
  c.header('X-Content-Type-Options', 'nosniff');
  return c.body(body, status);
}
