// What the node API's handlers see: the local API's dependencies (store, runtime, limits, log),
// the cloud link's authenticator and authorizer, and the stats collector.
import type { Context } from 'hono';
import type { NodeAuth, UserInfo } from '#lib/cloud/node-auth.ts';
import type { AppContext, AppEnv, Deps } from '#lib/http/env.ts';
import type { StatsCollector } from '#lib/pods/runtime/stats.ts';

export interface NodeApiDeps extends Deps {
  /** TokenReview and SubjectAccessReview through the cloud link. */
  nodeAuth: NodeAuth;
  stats: StatsCollector | undefined;
}

export type NodeApiEnv = { Variables: NodeApiDeps & AppEnv['Variables'] & { user?: UserInfo } };
export type NodeApiContext = Context<NodeApiEnv>;

/** The same request as the local API's shared code takes it (a superset of its variables). */
export const asApp = (c: NodeApiContext): AppContext => c as unknown as AppContext;
