import type { IncomingMessage } from 'node:http';
import { createMiddleware } from 'hono/factory';
import { type AuthConfig, authorize, identify } from '#lib/auth/authenticate.ts';
import { isLocalSocket } from '#lib/auth/local.ts';
import type { Principal } from '#lib/auth/roles.ts';
import { forbidden, StatusError, tooLarge } from '#lib/kube/status.ts';
import type { AppEnv } from './env.ts';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The Node request behind a Hono context on @hono/node-server (undefined on other hosts). */
const incoming = (env: unknown): IncomingMessage | undefined =>
  (env as { incoming?: IncomingMessage } | undefined)?.incoming;

const isLoopback = (ip: string | undefined) =>
  !ip || ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.');

/**
 * Whether a request came over plain http from another machine: what it carries crossed the network
 * in clear. Loopback, the local unix socket, TLS and hosts without a Node socket (tests) do not count.
 */
export function inClearFromAfar(env: unknown, url: string): boolean {
  const req = incoming(env);
  if (!req || isLocalSocket(req.socket) || new URL(url).protocol === 'https:') return false;
  return !isLoopback(req.socket.remoteAddress);
}

/** The dashboard's token cookie (`outpost_token`), if the request carries one. */
export const UI_COOKIE = 'outpost_token';
const uiToken = (header: string | undefined): string | undefined => {
  const m = /(?:^|;\s*)outpost_token=([^;]+)/.exec(header ?? '');
  try {
    return m ? decodeURIComponent(m[1]!) : undefined;
  } catch {
    return undefined; // malformed: as if absent
  }
};

/** Whether a call changes something and so goes to the audit trail (exec reads count). */
const audited = (method: string, path: string) => MUTATING.has(method) || /\/exec$/.test(path);

/**
 * Authentication, authorization, per-client rate limiting, body size limits and the audit trail,
 * in front of every route (exec's upgrades included: they pass through the app too).
 */
export const guard = () =>
  createMiddleware<AppEnv>(async (c, next) => {
    // c.get, not c.var: every read of c.var copies all the request's variables into a new object.
    const auth = c.get('auth');
    const limits = c.get('limits');
    const req = incoming(c.env);
    const ip = req?.socket.remoteAddress;
    const path = c.req.path;
    const record = (principal: Principal | undefined, code: number) => {
      // A create names its namespace in the path and the object only in the body.
      const m =
        /\/namespaces\/([^/]+)\/[^/]+\/([^/]+)/.exec(path) ??
        /^\/(?:pods|devices)\/([^/]+)\/([^/]+)/.exec(path) ??
        /\/namespaces\/([^/]+)\/[^/]+\/?$/.exec(path);
      const command = c.req.queries('command');
      c.get('store').audit.record({
        at: new Date(c.get('now')()).toISOString(),
        user: principal?.user ?? 'system:unauthenticated',
        role: principal?.role ?? 'none',
        source: ip ?? null,
        verb: req?.headers.upgrade ? `${c.req.method} (upgrade)` : c.req.method,
        path,
        namespace: m?.[1] ?? null,
        name: m?.[2] ?? null,
        detail: c.get('auditDetail') ?? (command?.length ? { command } : null),
        code,
      });
    };
    const isAudited = audited(c.req.method, path);
    // The dashboard signs in with a token kept in a cookie; an Authorization header wins.
    const cookie = uiToken(c.req.header('cookie'));
    const authorization = c.req.header('authorization') ?? (cookie ? `Bearer ${cookie}` : undefined);
    let principal: Principal | undefined;
    // Failed authentication is throttled per source address (an unknown one, e.g. app.request(), is not).
    const source =
      ip && (authorization || cookie) && !isLocalSocket(req?.socket) ? ip.replace(/^::ffff:/, '') : undefined;
    if (source) limits.authFailures?.check(source);
    try {
      principal = authorize(
        c.req.method,
        path,
        { authorization, socket: req?.socket, local: isLocalSocket(req?.socket) },
        auth,
      );
      // A cookie rides along with any request the browser makes, a forged cross-site form's too:
      // writes on its strength must carry a header only the dashboard's own script sets.
      if (
        cookie &&
        !c.req.header('authorization') &&
        MUTATING.has(c.req.method) &&
        !path.startsWith('/ui/') &&
        c.req.header('x-requested-with') !== 'outpost-ui'
      )
        throw forbidden('a call signed in by the dashboard cookie must come from the dashboard');
    } catch (e) {
      if (source && e instanceof StatusError && e.code === 401) limits.authFailures?.failed(source);
      // A browser opening a page without (valid) credentials goes to the sign-in form; scripts get the 401.
      if (
        e instanceof StatusError &&
        e.code === 401 &&
        c.req.method === 'GET' &&
        /^\/ui(\/|$)/.test(path) &&
        /text\/html/.test(c.req.header('accept') ?? '')
      )
        return c.redirect('/ui/login', 303);
      // Refused attempts at mutating calls are part of the trail too.
      if (isAudited && e instanceof StatusError) record(identified(authorization, req?.socket, auth), e.code);
      throw e;
    }
    if (principal) c.set('principal', principal);
    if (limits.rate && !isLoopback(ip))
      limits.rate.take(principal?.via === 'anonymous' || !principal ? (ip ?? '?') : principal.user);
    const length = Number(c.req.header('content-length') ?? 0);
    if (length > limits.maxBodyBytes)
      throw tooLarge(`request body of ${length} bytes exceeds the limit of ${limits.maxBodyBytes}`);
    if (!isAudited) return next();
    // Out of space: refuse before acting, rather than act and fail to record it.
    const { disk } = c.get('store');
    if (disk.full) throw disk.unavailable();
    let code = 500;
    try {
      await next();
      code = c.res.status;
    } catch (e) {
      code = e instanceof StatusError ? e.code : 500;
      throw e;
    } finally {
      record(principal, code);
    }
  });

/** Who a refused caller is, when their credentials are valid (a 403), for the audit trail. */
function identified(
  authorization: string | undefined,
  socket: unknown,
  auth: AuthConfig,
): Principal | undefined {
  try {
    return identify({ authorization, socket }, auth);
  } catch {
    return undefined;
  }
}
