import { describeLink } from '#lib/cloud/link.ts';
import { type HealthzKind, moduleChecks, renderHealthz } from '#lib/supervisor/healthz.ts';
import type { AppContext } from './env.ts';

/**
 * `/healthz`, `/livez`, `/readyz` in the Kubernetes healthz text format, from the module states.
 * With the cloud link, /readyz adds a `cloud-link` check that always passes (offline is a normal
 * state of an edge node; reads never wait for the cloud) and says in verbose output how the link is.
 */
export function healthAnswer(c: AppContext, kind: HealthzKind) {
  const verbose = c.req.query('verbose') !== undefined;
  const now = c.var.now();
  const checks = moduleChecks(kind, c.var.health(), now);
  const cloud = c.var.cloud;
  if (cloud && kind === 'readyz')
    checks.push({
      name: 'cloud-link',
      ok: true,
      note: describeLink(cloud.link.snapshot(), cloud.outboxStats(), now),
    });
  const { status, body } = renderHealthz(kind, checks, verbose);
  c.header('Content-Type', 'text/plain; charset=utf-8');
  c.header('X-Content-Type-Options', 'nosniff');
  return c.body(body, status);
}
