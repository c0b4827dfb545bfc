// Starts the node API with `serve --cloud`: HTTPS on --kubelet-port with the serving certificate
// from the cluster (self-signed until approved), client certificates checked against the
// kubeconfig's CA, and TokenReview/SubjectAccessReview through the cloud link.
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import type { CloudContext } from '#lib/cloud/context.ts';
import { clusterCa } from '#lib/cloud/kubeconfig.ts';
import { NodeAuth } from '#lib/cloud/node-auth.ts';
import { ServingCertificate } from '#lib/cloud/serving-cert.ts';
import type { Deps } from '#lib/http/env.ts';
import { StatsCollector } from '#lib/pods/runtime/stats.ts';
import { listen, type RunningServer } from '#lib/server.ts';
import { createNodeApiApp } from './app.ts';

export interface NodeApiOptions {
  deps: Deps;
  ctx: CloudContext;
  /** --kubelet-port (0 picks a free one: tests). */
  port: number;
  /** Where to listen (default every address, as kubelet). */
  address?: string;
  /** --node-ip: the address the Node reports and the certificate names. */
  nodeIP: string | undefined;
  dataDir: string;
}

export interface NodeApi {
  server: RunningServer;
  /** The port it listens on. */
  port: number;
  /** The address the Node should report (InternalIP). */
  nodeIP: string | undefined;
  certificate: ServingCertificate;
  /** Keeps the serving certificate issued and renewed until `signal` aborts. */
  run(signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** The first non-internal IPv4 address of the host (kubelet's default node IP), if any. */
export function defaultNodeIP(): string | undefined {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return undefined;
}

export async function startNodeApi(o: NodeApiOptions): Promise<NodeApi> {
  const { deps, ctx } = o;
  const log = deps.log.child({ module: 'node-api' });
  const nodeIP = o.nodeIP ?? defaultNodeIP();
  // The cluster's CA (inline or a file), which client certificates must chain to.
  const ca = clusterCa(ctx.kubeConfig);
  if (!ca)
    log.warn({}, 'the kubeconfig has no CA: the node API accepts bearer tokens only, no client certificates');
  let server: RunningServer | undefined;
  const certificate = new ServingCertificate({
    ctx,
    dir: join(o.dataDir, 'pki'),
    alt: { dns: [ctx.nodeName], ips: nodeIP ? [nodeIP] : [] },
    clock: { now: deps.now },
    log,
    onChange: (pair) => server?.setTls({ cert: Buffer.from(pair.cert), key: Buffer.from(pair.key), ca }),
  });
  const app = createNodeApiApp({
    ...deps,
    log,
    nodeAuth: new NodeAuth(ctx, { now: deps.now }),
    stats: deps.stats ?? (deps.cri ? new StatsCollector(deps.cri, ctx.nodeName, deps.now) : undefined),
  });
  const pair = certificate.current;
  server = await listen(app, o.address ?? '0.0.0.0', o.port, {
    cert: Buffer.from(pair.cert),
    key: Buffer.from(pair.key),
    ca,
  });
  const port = Number(new URL(server.url).port);
  log.info({ port, nodeIP, issued: pair.issued }, 'node API listening');
  const running = server;
  return {
    server: running,
    port,
    nodeIP,
    certificate,
    run: (signal) => certificate.run(signal),
    close: () => running.close(),
  };
}
