import type { Role } from './roles.ts';

/** What a request needs: no one (`public`) or at least a role. */
export type Requirement = Role | 'public';

const PUBLIC = new Set(['/healthz', '/livez', '/readyz', '/version']);

/**
 * The role each operation needs: viewer reads (pods, events, devices, logs, metrics, not Secrets),
 * operator also creates, changes and deletes pods and ConfigMaps, restarts pods and edits devices,
 * admin also reads and writes Secrets, execs into containers, forwards ports and reads the audit trail.
 * Anything not named here needs admin, so a new mutating route is closed until it is classified.
 */
export function requiredRole(method: string, path: string): Requirement {
  const p = path.length > 1 ? path.replace(/\/+$/, '') : path;
  if (PUBLIC.has(p) && (method === 'GET' || method === 'HEAD')) return 'public';
  // The dashboard's sign-in and sign-out, and its script (no data in it).
  if (p === '/ui/login' && (method === 'GET' || method === 'POST')) return 'public';
  if (p === '/ui/logout' && method === 'POST') return 'public';
  if (p === '/ui/app.js' && method === 'GET') return 'public';
  if (/\/(exec|portforward)$/.test(p)) return 'admin';
  if (/^\/(api\/v1\/)?audit(\/|$)/.test(p)) return 'admin';
  // Secrets are read and written by admins only (a list or watch of them carries their data).
  if (/^\/api\/v1\/(namespaces\/[^/]+\/)?secrets(\/|$)/.test(p)) return 'admin';
  if (method === 'GET' || method === 'HEAD') return 'viewer';
  // Operators run workloads: pods (and their status and eviction) and the ConfigMaps they read.
  if (/^\/api\/v1\/namespaces\/[^/]+\/(pods|configmaps)(\/[^/]+(\/(status|eviction))?)?$/.test(p))
    return 'operator';
  if (method === 'POST' && /\/restart$/.test(p)) return 'operator';
  if ((method === 'PUT' || method === 'PATCH') && /\/devices\/[^/]+$/.test(p)) return 'operator';
  return 'admin';
}

/** Logs: read by viewers with a credential, never without one (programs print secrets). */
const LOGS = /^\/(api\/v1\/namespaces\/[^/]+\/pods\/[^/]+\/log|pods\/[^/]+\/[^/]+\/logs)$/;

/**
 * What a caller without credentials may do with the anonymous role `viewer`: get, list and watch
 * what a viewer reads, except logs. Writes, exec, Secrets and the audit trail need a credential.
 */
export function anonymousMay(method: string, path: string): boolean {
  const p = path.length > 1 ? path.replace(/\/+$/, '') : path;
  const need = requiredRole(method, p);
  if (need === 'public') return true;
  return (method === 'GET' || method === 'HEAD') && need === 'viewer' && !LOGS.test(p);
}
