// Who may call the node API, decided as kubelet's webhook modes decide it: a client certificate
// verified against the cluster's CA (CN user, O groups) or a bearer token checked with a
// TokenReview; then every request authorized with a SubjectAccessReview on the node (resource
// `nodes`, subresource by path, verb by method). Answers are cached briefly (kubelet's defaults:
// tokens 2 min, allowed 5 min, denied 30 s). Without an answer from the API server and nothing
// cached, the request is refused: the node never decides on its own.
import { createHash } from 'node:crypto';
import type { Clock } from '#lib/clock.ts';
import { forbidden, StatusError, unauthorized } from '#lib/kube/status.ts';
import type { CloudContext } from './context.ts';

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** What a request asks of the node, as a SubjectAccessReview's resourceAttributes. */
export interface NodeRequestAttributes {
  verb: string;
  subresource: string;
}

export const TOKEN_TTL_MS = 120_000;
export const ALLOWED_TTL_MS = 300_000;
export const DENIED_TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;

/** kubelet's verb for an HTTP method. */
export function verbOf(method: string): string {
  switch (method.toUpperCase()) {
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return 'get';
  }
}

/** kubelet's subresource for a path: stats, metrics, log (node logs), spec, else proxy. */
export function subresourceOf(path: string): string {
  const first = path.split('/')[1] ?? '';
  if (first === 'stats') return 'stats';
  if (first === 'metrics') return 'metrics';
  if (first === 'logs') return 'log';
  if (first === 'spec') return 'spec';
  return 'proxy';
}

export const attributesOf = (method: string, path: string): NodeRequestAttributes => ({
  verb: verbOf(method),
  subresource: subresourceOf(path),
});

const unreachable = (what: string) =>
  new StatusError(
    503,
    'ServiceUnavailable',
    `cannot ${what}: the API server is unreachable and no recent decision is cached`,
  );

class TtlCache<V> {
  readonly #m = new Map<string, { value: V; until: number }>();
  constructor(private readonly now: () => number) {}
  get(key: string): V | undefined {
    const e = this.#m.get(key);
    if (!e) return undefined;
    if (e.until <= this.now()) {
      this.#m.delete(key);
      return undefined;
    }
    return e.value;
  }
  set(key: string, value: V, ttlMs: number): void {
    if (this.#m.size >= MAX_ENTRIES) this.#m.delete(this.#m.keys().next().value as string);
    this.#m.set(key, { value, until: this.now() + ttlMs });
  }
}

type Review = {
  status?: {
    authenticated?: boolean;
    user?: Partial<UserInfo>;
    allowed?: boolean;
    reason?: string;
    error?: string;
  };
};

/** The webhook authenticator and authorizer of the node API. */
export class NodeAuth {
  readonly #tokens: TtlCache<UserInfo | null>;
  readonly #decisions: TtlCache<{ allowed: boolean; reason: string }>;

  constructor(
    private readonly ctx: Pick<CloudContext, 'request' | 'nodeName'>,
    clock: Pick<Clock, 'now'>,
  ) {
    const now = () => clock.now();
    this.#tokens = new TtlCache(now);
    this.#decisions = new TtlCache(now);
  }

  /** The user a bearer token belongs to (TokenReview); 401 when it is not valid. */
  async authenticateToken(token: string): Promise<UserInfo> {
    const key = createHash('sha256').update(token).digest('hex');
    let user = this.#tokens.get(key);
    if (user === undefined) {
      let review: Review;
      try {
        review = await this.ctx.request<Review>('/apis/authentication.k8s.io/v1/tokenreviews', {
          method: 'POST',
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
        });
      } catch {
        throw unreachable('verify the bearer token');
      }
      const s = review.status;
      user =
        s?.authenticated && s.user?.username
          ? {
              username: s.user.username,
              groups: s.user.groups ?? [],
              ...(s.user.uid ? { uid: s.user.uid } : {}),
              ...(s.user.extra ? { extra: s.user.extra } : {}),
            }
          : null;
      this.#tokens.set(key, user, user ? TOKEN_TTL_MS : DENIED_TTL_MS);
    }
    if (!user) throw unauthorized();
    return user;
  }

  /** Allows the request, or throws 403 (denied) or 503 (no decision to be had). */
  async authorize(user: UserInfo, attrs: NodeRequestAttributes): Promise<void> {
    const key = JSON.stringify([
      user.username,
      user.uid,
      [...user.groups].sort(),
      user.extra,
      attrs.verb,
      attrs.subresource,
    ]);
    let decision = this.#decisions.get(key);
    if (!decision) {
      let review: Review;
      try {
        review = await this.ctx.request<Review>('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
          method: 'POST',
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: {
              user: user.username,
              groups: user.groups,
              ...(user.uid ? { uid: user.uid } : {}),
              ...(user.extra ? { extra: user.extra } : {}),
              resourceAttributes: {
                verb: attrs.verb,
                resource: 'nodes',
                subresource: attrs.subresource,
                name: this.ctx.nodeName,
              },
            },
          },
        });
      } catch {
        throw unreachable('authorize the request');
      }
      const allowed = review.status?.allowed === true;
      decision = { allowed, reason: review.status?.reason ?? '' };
      this.#decisions.set(key, decision, allowed ? ALLOWED_TTL_MS : DENIED_TTL_MS);
    }
    if (!decision.allowed) {
      // kubelet's message, naming what was asked.
      throw forbidden(
        `Forbidden (user=${user.username}, verb=${attrs.verb}, resource=nodes, subresource(s)=[${attrs.subresource}])${decision.reason ? `: ${decision.reason}` : ''}`,
      );
    }
  }
}
