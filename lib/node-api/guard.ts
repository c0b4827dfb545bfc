// kubelet's webhook authentication and authorization in front of every node API request: a
// client certificate the TLS layer verified against the cluster's CA, else a bearer token
// (TokenReview); anonymous callers are refused (401); then a SubjectAccessReview decides (403).
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { createMiddleware } from 'hono/factory';
import { attributesOf, type UserInfo } from '#lib/cloud/node-auth.ts';
import { unauthorized } from '#lib/kube/status.ts';
import type { NodeApiEnv } from './env.ts';

/** The identity of a verified client certificate: CN is the user, each O a group. */
export function certificateUser(socket: Partial<TLSSocket> | undefined): UserInfo | undefined {
  if (!socket?.authorized || typeof socket.getPeerCertificate !== 'function') return undefined;
  const subject = socket.getPeerCertificate().subject;
  const cn = subject?.CN;
  const user = Array.isArray(cn) ? cn[0] : cn;
  if (!user) return undefined;
  const o = subject.O;
  return { username: user, groups: (Array.isArray(o) ? o : o ? [o] : []).filter(Boolean) };
}

// Streams that act on a container or pod: each one is logged with who asked.
const STREAMS = /^\/(exec|attach|portForward|run)\//;

export const nodeGuard = () =>
  createMiddleware<NodeApiEnv>(async (c, next) => {
    const req = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const header = c.req.header('authorization');
    let user = certificateUser(req?.socket as TLSSocket | undefined);
    if (!user && header !== undefined) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!m) throw unauthorized();
      user = await c.var.nodeAuth.authenticateToken(m[1]!);
    }
    if (!user) throw unauthorized();
    await c.var.nodeAuth.authorize(user, attributesOf(c.req.method, c.req.path));
    c.set('user', user);
    if (STREAMS.test(c.req.path))
      c.var.log.info({ user: user.username, method: c.req.method, path: c.req.path }, 'node API stream');
    await next();
  });
