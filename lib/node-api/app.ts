// The node API: what kubelet serves on its port (10250) and the API server calls for `kubectl
// logs`, `exec`, `attach`, `port-forward` and for metrics. Same handlers' code as the local API;
// its own authentication and authorization (guard.ts).
import { Hono } from 'hono';
import { errorStatus } from '#lib/app.ts';
import { StatusError } from '#lib/kube/status.ts';
import type { NodeApiContext, NodeApiDeps, NodeApiEnv } from './env.ts';
import { nodeGuard } from './guard.ts';
import * as attach from './routes/attach.ts';
import * as containerLogs from './routes/container-logs.ts';
import * as exec from './routes/exec.ts';
import * as healthz from './routes/healthz.ts';
import * as metrics from './routes/metrics.ts';
import * as metricsResource from './routes/metrics-resource.ts';
import * as pods from './routes/pods.ts';
import * as portForward from './routes/port-forward.ts';
import * as run from './routes/run.ts';
import * as statsSummary from './routes/stats-summary.ts';

type Handler = (c: NodeApiContext) => Response | Promise<Response>;
type Module = Partial<Record<'GET' | 'POST', Handler>>;

/** kubelet's paths; the `{uid}` forms are what newer API servers send. */
export const NODE_API_ROUTES: [string, Module][] = [
  ['/containerLogs/:ns/:pod/:container', containerLogs],
  ['/exec/:ns/:pod/:container', exec],
  ['/exec/:ns/:pod/:uid/:container', exec],
  ['/attach/:ns/:pod/:container', attach],
  ['/attach/:ns/:pod/:uid/:container', attach],
  ['/portForward/:ns/:pod', portForward],
  ['/portForward/:ns/:pod/:uid', portForward],
  ['/run/:ns/:pod/:container', run],
  ['/run/:ns/:pod/:uid/:container', run],
  ['/pods', pods],
  ['/healthz', healthz],
  ['/metrics', metrics],
  ['/metrics/resource', metricsResource],
  ['/stats/summary', statsSummary],
];

export function createNodeApiApp(deps: NodeApiDeps): Hono<NodeApiEnv> {
  const app = new Hono<NodeApiEnv>();
  app.use(async (c, next) => {
    for (const [key, value] of Object.entries(deps)) c.set(key as keyof NodeApiDeps, value as never);
    await next();
  });
  app.use(nodeGuard());
  for (const [path, mod] of NODE_API_ROUTES) {
    if (mod.GET) app.get(path, mod.GET);
    if (mod.POST) app.post(path, mod.POST);
  }
  app.notFound((c) => {
    const err = new StatusError(404, 'NotFound', 'the server could not find the requested resource');
    return c.json(err.toStatus(), 404);
  });
  app.onError((err, c) => {
    const status = errorStatus(err, deps.log, c.req.method, c.req.path, deps.store.disk);
    return c.json(status.toStatus(), status.code as 400);
  });
  return app;
}
