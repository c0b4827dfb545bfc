import { timingSafeEqual } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { forbidden, unauthorized } from '#lib/kube/status.ts';
import { anonymousMay, requiredRole } from './policy.ts';
import { allows, isRole, type Principal, type Role } from './roles.ts';
import { hashToken, type TokenTable } from './tokens.ts';

/** How callers prove who they are; with nothing configured (unit tests), every caller is an admin. */
export interface AuthConfig {
  tokens?: TokenTable | undefined;
  /** Client certificates verified against --client-ca: CN = user, O = role. */
  clientCerts?: boolean | undefined;
  /** The hash of the data directory's admin token (lib/auth/admin.ts). */
  admin?: string | undefined;
  /** The role of a TCP caller without credentials; none: 401. */
  anonymous?: Role | undefined;
  /** Where the admin kubeconfig is, named in the 403 a caller without credentials gets. */
  adminKubeconfig?: string | undefined;
}

export const authConfigured = (a: AuthConfig): boolean => !!a.tokens || !!a.clientCerts || !!a.admin;

const LOCAL_ADMIN: Principal = { user: 'system:admin', role: 'admin', via: 'socket' };

const sameHash = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

const ANONYMOUS: Principal = { user: 'system:anonymous', role: 'admin', via: 'anonymous' };

/** What a request carries: its Authorization header and, over TLS, its socket. */
export interface Credentials {
  authorization?: string | undefined;
  socket?: unknown;
  /** Came through the root-only unix socket (DATA_DIR/outpost.sock). */
  local?: boolean | undefined;
}

/** Who is calling, or throws 401 for credentials that do not check out. Undefined: no credentials. */
export function identify(creds: Credentials, auth: AuthConfig): Principal | undefined {
  if (!authConfigured(auth)) return ANONYMOUS;
  const header = creds.authorization;
  if (header !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (m && auth.admin && sameHash(hashToken(m[1]!), auth.admin))
      return { user: 'admin', role: 'admin', via: 'token' };
    const entry = m && auth.tokens?.lookup(m[1]!);
    if (!entry) throw unauthorized();
    return { user: entry.user, role: entry.role, via: 'token' };
  }
  const socket = creds.socket as Partial<TLSSocket> | undefined;
  if (auth.clientCerts && socket?.authorized && typeof socket.getPeerCertificate === 'function') {
    const cert = socket.getPeerCertificate();
    const user = typeof cert.subject?.CN === 'string' ? cert.subject.CN : undefined;
    const org = cert.subject?.O;
    const role = (Array.isArray(org) ? org : [org]).find(
      (o): o is string => typeof o === 'string' && isRole(o),
    );
    if (!user || !role)
      throw unauthorized('client certificate has no CN user or no O role (viewer, operator, admin)');
    return { user, role: role as Principal['role'], via: 'certificate' };
  }
  if (creds.local) return LOCAL_ADMIN;
  if (auth.anonymous) return { user: 'system:anonymous', role: auth.anonymous, via: 'anonymous' };
  return undefined;
}

/** Authenticates and authorizes one request; returns the principal (or undefined for public paths). */
export function authorize(
  method: string,
  path: string,
  creds: Credentials,
  auth: AuthConfig,
): Principal | undefined {
  const need = requiredRole(method, path);
  let who: Principal | undefined;
  try {
    who = identify(creds, auth);
  } catch (e) {
    if (need === 'public') return undefined;
    throw e;
  }
  if (need === 'public') return who;
  if (!who) throw unauthorized();
  // Without credentials, a viewer reads objects only: no logs (they carry what programs print).
  if (who.via === 'anonymous' && who.role !== 'admin' && !anonymousMay(method, path)) {
    const how = auth.adminKubeconfig
      ? `use the admin kubeconfig (kubectl --kubeconfig ${auth.adminKubeconfig}, over https) or its token`
      : 'authenticate with a token or a client certificate';
    throw forbidden(
      `User "${who.user}" cannot ${method} ${path}: callers without credentials may only read non-secret objects; ${how}`,
    );
  }
  if (!allows(who.role, need)) {
    throw forbidden(`User "${who.user}" (role ${who.role}) cannot ${method} ${path}: it needs role ${need}`);
  }
  return who;
}
