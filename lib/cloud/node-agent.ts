// Being the node, as kubelet is, within issue 22's budget (at most 7 requests a minute idle):
// register or adopt the Node, renew its Lease every 10 s (6 PUTs a minute), WATCH the own Node
// instead of reading it every 10 s (one request per 5-10 minutes), and patch node status only
// when something changed or every 5 minutes. Each online session runs the three loops; the link
// going offline ends the session and the next starts once the reconnector gets an answer.
import { sleep } from '#lib/clock.ts';
import { ApiError, type CloudContext } from './context.ts';
import { readHost } from './host.ts';
import { type LeaseKeeper, newLeaseKeeper } from './lease.ts';
import { httpListWatch } from './list-watch.ts';
import {
  desiredStatus,
  type NodeObject,
  type NodeReport,
  nodeLabels,
  stampConditions,
  statusFingerprint,
  statusPatch,
} from './node-status.ts';
import { GoneError } from './reflector.ts';

export interface RuntimeFacts {
  ready: boolean;
  message?: string;
  /** `containerd://1.6.20`. */
  version: string;
}

export interface NodeAgentOptions {
  ctx: CloudContext;
  dataDir: string;
  /** The node API's port (daemonEndpoints.kubeletEndpoint). */
  port: number;
  /** --node-ip: the InternalIP to report instead of the detected one. */
  nodeIP?: string | undefined;
  runtime: () => Promise<RuntimeFacts>;
  /** Set while metabase writes fail for lack of space. */
  metabaseFull?: () => { dataDir: string; free: number } | undefined;
  renewIntervalMs?: number;
  leaseDurationSeconds?: number;
  /** A status patch at least this often even when nothing changed (kubelet: 5 min). */
  statusMaxIntervalMs?: number;
}

class NodeDeleted extends Error {}

/** The node side of the cloud link. */
export class NodeAgent {
  /** The Node as last seen (registration answer, watch events, patch answers). */
  node: NodeObject | undefined;
  private lastPatchAt = 0;
  private lastPatched = '';
  private readonly lease: LeaseKeeper;
  private readonly path: string;
  private statusPending: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly o: NodeAgentOptions) {
    this.path = `/api/v1/nodes/${encodeURIComponent(o.ctx.nodeName)}`;
    this.lease = newLeaseKeeper(o.ctx, o.leaseDurationSeconds ?? 40);
  }

  private get ctx() {
    return this.o.ctx;
  }

  /** Runs online sessions until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const log = this.ctx.log;
    while (!signal.aborted) {
      try {
        await this.ctx.link.waitOnline(signal);
      } catch {
        return;
      }
      const session = new AbortController();
      const offline = this.ctx.link.onChange((s) => s.state === 'offline' && session.abort());
      const stop = () => session.abort();
      signal.addEventListener('abort', stop, { once: true });
      try {
        await this.register(session.signal);
        await Promise.race([
          this.leaseLoop(session.signal),
          this.watchLoop(session.signal),
          this.statusLoop(session.signal),
        ]);
      } catch (e) {
        if (e instanceof NodeDeleted) {
          log.warn({ node: this.ctx.nodeName }, 'the Node was deleted in the cluster; registering it again');
        } else if (e instanceof ApiError) {
          log.error(
            { err: e, code: e.code },
            'cloud node: the API server refused a request; retrying in 10 s',
          );
          await sleep(10_000, signal);
        } else if (!session.signal.aborted) {
          log.debug({ err: e }, 'cloud node session ended');
        }
      } finally {
        session.abort();
        offline();
        signal.removeEventListener('abort', stop);
      }
    }
  }

  private async report(): Promise<NodeReport> {
    const rt = await this.o
      .runtime()
      .catch((e: Error) => ({ ready: false, message: e.message, version: '' }));
    const host = readHost(this.o.dataDir);
    if (this.o.nodeIP) host.internalIP = this.o.nodeIP;
    return {
      host,
      runtimeReady: rt.ready,
      ...(rt.message ? { runtimeMessage: rt.message } : {}),
      runtimeVersion: rt.version,
      port: this.o.port,
      metabaseFull: this.o.metabaseFull?.(),
    };
  }

  /** GET the Node; create it on 404 (409: someone was faster, adopt); adopt adds missing labels. */
  async register(signal: AbortSignal): Promise<void> {
    const name = this.ctx.nodeName;
    const report = await this.report();
    const labels = nodeLabels(name, report.host);
    let node = await this.ctx.request<NodeObject>(this.path, { signal }).catch((e) => {
      if (e instanceof ApiError && e.code === 404) return undefined;
      throw e;
    });
    if (!node) {
      const status = desiredStatus(report, name);
      status.conditions = stampConditions(status.conditions, undefined, this.ctx.clock.now());
      node = await this.ctx
        .request<NodeObject>('/api/v1/nodes', {
          method: 'POST',
          signal,
          body: { apiVersion: 'v1', kind: 'Node', metadata: { name, labels }, spec: {}, status },
        })
        .catch(async (e) => {
          if (e instanceof ApiError && e.code === 409)
            return this.ctx.request<NodeObject>(this.path, { signal });
          throw e;
        });
      this.ctx.log.info({ node: name, server: this.ctx.server }, 'registered the Node');
      this.lastPatched = statusFingerprint(status);
      this.lastPatchAt = this.ctx.clock.now();
      this.node = node;
      return;
    } else {
      const missing = Object.entries(labels).filter(([k, v]) => node?.metadata.labels?.[k] !== v);
      if (missing.length) {
        node = await this.ctx.request<NodeObject>(this.path, {
          method: 'PATCH',
          signal,
          contentType: 'application/merge-patch+json',
          body: { metadata: { labels: Object.fromEntries(missing) } },
        });
      }
      this.ctx.log.info({ node: name, server: this.ctx.server }, 'adopted the existing Node');
    }
    this.node = node;
    await this.syncStatus(signal, report, true); // kubelet patches status on every start
  }

  /** Patches node status when it differs from what the cluster shows, or `force`, or every 5 min. */
  async syncStatus(signal: AbortSignal, given?: NodeReport, force = false): Promise<void> {
    const report = given ?? (await this.report());
    const desired = desiredStatus(report, this.ctx.nodeName);
    const fp = statusFingerprint(desired);
    const now = this.ctx.clock.now();
    const observed = statusFingerprint(this.node?.status);
    const due = now - this.lastPatchAt >= (this.o.statusMaxIntervalMs ?? 300_000);
    if (!force && !due && fp === observed) return;
    desired.conditions = stampConditions(desired.conditions, this.node?.status?.conditions, now);
    const node = await this.ctx.request<NodeObject>(`${this.path}/status`, {
      method: 'PATCH',
      signal,
      contentType: 'application/strategic-merge-patch+json',
      body: statusPatch(desired),
    });
    this.node = node;
    this.lastPatched = fp;
    this.lastPatchAt = now;
  }

  /** Asks for a status check now (a runtime change, a pressure change). */
  poke(): void {
    this.wake?.();
  }

  private async statusLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(t);
          signal.removeEventListener('abort', done);
          this.wake = undefined;
          resolve();
        };
        const t = setTimeout(done, this.o.renewIntervalMs ?? 10_000);
        this.wake = done;
        signal.addEventListener('abort', done, { once: true });
      });
      if (signal.aborted) return;
      this.statusPending = this.syncStatus(signal);
      await this.statusPending;
    }
  }

  private async leaseLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.lease.renew(this.node, signal);
      await sleep(this.o.renewIntervalMs ?? 10_000, signal);
    }
  }

  private async watchLoop(signal: AbortSignal): Promise<void> {
    const lw = httpListWatch(this.ctx, '/api/v1/nodes', `metadata.name=${this.ctx.nodeName}`);
    let rv = this.node?.metadata.resourceVersion ?? '0';
    while (!signal.aborted) {
      try {
        for await (const e of lw.watch(rv, signal)) {
          if (e.type === 'ERROR') {
            if (e.object.code === 410) throw new GoneError(e.object.message ?? 'watch: 410 Expired');
            throw new ApiError(
              e.object.code ?? 500,
              e.object.reason ?? 'InternalError',
              e.object.message ?? 'watch error',
            );
          }
          rv = e.object.metadata?.resourceVersion ?? rv;
          if (e.type === 'DELETED') throw new NodeDeleted();
          if (e.type === 'BOOKMARK') continue;
          this.node = e.object as unknown as NodeObject;
          // Someone changed what the node reports (the lifecycle controller set Ready Unknown):
          // correct it now rather than at the next tick.
          if (statusFingerprint(this.node.status) !== this.lastPatched) this.poke();
        }
      } catch (e) {
        if (!(e instanceof GoneError)) throw e;
        this.node = await this.ctx.request<NodeObject>(this.path, { signal });
        rv = this.node.metadata.resourceVersion ?? '0';
      }
    }
  }
}
