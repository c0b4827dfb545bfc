import type { AppContext } from './env.ts';

/** Kubernetes healthz text: `ok`, or `[+]`/`[-]` lines per check with `?verbose` or on failure. */
export function healthAnswer(c: AppContext, kind: 'healthz' | 'livez' | 'readyz') {
  const checks = [{ name: 'ping', ok: true }, ...c.var.health().filter((h) => kind === 'readyz' || !h.readiness)];
  const verbose = c.req.query('verbose') !== undefined;
  const failed = checks.filter((h) => !h.ok);
  c.header('Content-Type', 'text/plain; charset=utf-8');
  c.header('X-Content-Type-Options', 'nosniff');
  if (!verbose && failed.length === 0) return c.body('ok', 200);
  const lines = checks.map((h) =>
    h.ok ? `[+]${h.name} ok` : `[-]${h.name} failed: ${verbose ? (h.detail ?? 'failed') : 'reason withheld'}`,
  );
  lines.push(failed.length ? `${kind} check failed` : `${kind} check passed`);
  return c.body(`${lines.join('\n')}\n`, failed.length ? 500 : 200);
}
