import type { Role } from './roles.ts';

/** What a request needs: no one (`public`) or at least a role. */
export type Requirement = Role | 'public';

const PUBLIC = new Set(['/healthz', '/livez', '/readyz', '/version']);

/**
 * The role each operation needs: viewer reads (pods, events, devices, logs, metrics), operator
 * also restarts pods and edits devices, admin also execs into containers and reads the audit trail.
 * Anything not named here needs admin, so a new mutating route is closed until it is classified.
 */
export function requiredRole(method: string, path: string): Requirement {
  const p = path.length > 1 ? path.replace(/\/+$/, '') : path;
  if (PUBLIC.has(p) && (method === 'GET' || method === 'HEAD')) return 'public';
  if (/\/exec$/.test(p)) return 'admin';
  if (/^\/(api\/v1\/)?audit(\/|$)/.test(p)) return 'admin';
  if (method === 'GET' || method === 'HEAD') return 'viewer';
  if (method === 'POST' && /\/restart$/.test(p)) return 'operator';
  if ((method === 'PUT' || method === 'PATCH') && /\/devices\/[^/]+$/.test(p)) return 'operator';
  return 'admin';
}
