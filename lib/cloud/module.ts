// The `cloud` module: the reconnector and the node's loops over one CloudContext. Readiness does
// not follow the link: offline is a normal state of an edge node (reads never wait for the cloud),
// and the link's state has its own line in /readyz?verbose, /metrics and `outpost status`.
import type { ModuleSpec } from '#lib/supervisor/modules.ts';
import { runCertificateRotation } from './bootstrap/rotation.ts';
import type { CloudContext } from './context.ts';
import { NodeAgent, type RuntimeFacts } from './node-agent.ts';
import { runReconnector } from './reconnect.ts';

export interface CloudModuleOptions {
  ctx: CloudContext;
  /** The kubeconfig file, re-read after a certificate rotation. */
  kubeconfigPath?: string | undefined;
  dataDir: string;
  /** The node API's port and --node-ip, reported in the Node's status. */
  port: number;
  nodeIP?: string | undefined;
  runtime: () => Promise<RuntimeFacts>;
  /** Set while metabase writes fail for lack of space (the Node's DiskPressure). */
  metabaseFull?: () => { dataDir: string; free: number } | undefined;
  /** The Lease's duration (renewed every quarter of it) and the longest time between status patches. */
  leaseDurationMs?: number;
  statusReportMs?: number;
  /** Called with the NodeAgent once it exists (tests, the status command). */
  onNode?: (node: NodeAgent) => void;
}

/** The supervised module that keeps the node registered, leased and reported. */
export function cloudModule(o: CloudModuleOptions): ModuleSpec {
  return {
    name: 'cloud',
    policy: 'Always',
    run: async (mctx) => {
      const { ctx } = o;
      const off = ctx.link.onChange((s) =>
        s.state === 'offline'
          ? ctx.log.warn({ server: ctx.server, reason: s.lastError }, 'cloud link offline')
          : ctx.log.info({ server: ctx.server }, 'cloud link online'),
      );
      const node = new NodeAgent({
        ctx,
        dataDir: o.dataDir,
        port: o.port,
        nodeIP: o.nodeIP,
        runtime: o.runtime,
        ...(o.leaseDurationMs
          ? {
              leaseDurationSeconds: Math.round(o.leaseDurationMs / 1000),
              renewIntervalMs: o.leaseDurationMs / 4,
            }
          : {}),
        ...(o.statusReportMs ? { statusMaxIntervalMs: o.statusReportMs } : {}),
        ...(o.metabaseFull ? { metabaseFull: o.metabaseFull } : {}),
      });
      o.onNode?.(node);
      mctx.ready();
      try {
        await Promise.all([
          runReconnector(ctx, mctx.signal),
          node.run(mctx.signal),
          o.kubeconfigPath ? runCertificateRotation(ctx, o.kubeconfigPath, mctx.signal) : undefined,
        ]);
      } finally {
        off();
      }
    },
  };
}
