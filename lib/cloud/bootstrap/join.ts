// `outpost join`: TLS bootstrapping as `kubeadm join` + kubelet do it. With --token and
// --ca-cert-hash: discover the cluster (cluster-info, JWS-verified, CA pinned), then use the token
// to request a client certificate; with --bootstrap-kubeconfig: use its server, CA and token as
// they are. The result is DATA_DIR/pki/kubeconfig for `outpost serve --cloud`.
import { Agent, request } from 'undici';
import { stringify } from 'yaml';
import type { Clock } from '#lib/clock.ts';
import type { Logger } from '#lib/log.ts';
import { type CloudContext, createCloudContext } from '../context.ts';
import { clusterCa, type Kubeconfig, readKubeconfig } from '../kubeconfig.ts';
import { pkiPaths, requestNodeCertificate, storeNodeCertificate, writePrivate } from './certificates.ts';
import { type ClusterInfo, parseCaHash, parseToken, verifyClusterInfo } from './discovery.ts';

export interface JoinOptions {
  nodeName: string;
  dataDir: string;
  server?: string;
  token?: string;
  caCertHashes?: string[];
  bootstrapKubeconfig?: string;
  clock: Clock;
  log: Logger;
  /** How long to wait for the CSR's approval (default 15 min). */
  timeoutMs?: number;
}

const CLUSTER_INFO = '/api/v1/namespaces/kube-public/configmaps/cluster-info';

async function fetchClusterInfo(server: string, ca?: string): Promise<Record<string, string> | undefined> {
  // Before the CA is known the server is not trusted: what it says is checked by the JWS and the pin.
  const dispatcher = new Agent({ connect: ca ? { ca } : { rejectUnauthorized: false } });
  try {
    const res = await request(`${server.replace(/\/+$/, '')}${CLUSTER_INFO}`, {
      dispatcher,
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
    const body = (await res.body.json()) as { data?: Record<string, string>; message?: string };
    if (res.statusCode !== 200)
      throw new Error(
        `GET ${CLUSTER_INFO}: HTTP ${res.statusCode}${body.message ? `: ${body.message}` : ''}`,
      );
    return body.data;
  } finally {
    await dispatcher.close();
  }
}

/** Discovery: the server's CA, verified by the token's signature and the pinned hashes. */
export async function discover(server: string, token: string, hashes: string[]): Promise<ClusterInfo> {
  const t = parseToken(token);
  const pins = hashes.map(parseCaHash);
  if (pins.length === 0) throw new Error('--ca-cert-hash is required with --token (the CA must be pinned)');
  const info = verifyClusterInfo(await fetchClusterInfo(server), t, pins);
  // As kubeadm does: read it again over TLS with the CA just trusted, and expect the same.
  const again = await fetchClusterInfo(server, info.caPem);
  verifyClusterInfo(again, t, pins);
  return info;
}

/** A kubeconfig for `server` trusting `caFile`, authenticating with `user`. */
export function kubeconfigYaml(
  server: string,
  caFile: string,
  user: Record<string, string>,
  name = 'outpost',
): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'cloud', cluster: { server, 'certificate-authority': caFile } }],
    users: [{ name, user }],
    contexts: [{ name: `${name}@cloud`, context: { cluster: 'cloud', user: name } }],
    'current-context': `${name}@cloud`,
  });
}

/** Runs the join; returns the path of the node's kubeconfig. */
export async function join(o: JoinOptions): Promise<string> {
  const p = pkiPaths(o.dataDir);
  let bootstrap: Kubeconfig;
  let server: string;
  let caPem: string | undefined;
  if (o.bootstrapKubeconfig) {
    bootstrap = readKubeconfig(o.bootstrapKubeconfig);
    server = bootstrap.cluster.server;
    caPem = clusterCa(bootstrap)?.toString('utf8');
  } else {
    if (!o.server || !o.token)
      throw new Error('outpost join needs --server and --token (or --bootstrap-kubeconfig)');
    server = o.server.replace(/\/+$/, '');
    // The bootstrap signer adds a new token's signature within seconds; as kubeadm, retry until then.
    const until = Date.now() + Math.min(o.timeoutMs ?? 300_000, 300_000);
    let info: ClusterInfo;
    for (;;) {
      try {
        info = await discover(server, o.token, o.caCertHashes ?? []);
        break;
      } catch (e) {
        const retry = /no signature for token|ECONNREFUSED|ECONNRESET|timeout/i.test((e as Error).message);
        if (!retry || Date.now() > until) throw e;
        o.log.info({ reason: (e as Error).message }, 'cluster-info not usable yet; retrying in 2 s');
        await new Promise((r) => setTimeout(r, 2_000));
      }
    }
    caPem = info.caPem;
    bootstrap = {
      source: `(bootstrap token for ${server})`,
      context: 'bootstrap',
      cluster: { name: 'cloud', server, caData: Buffer.from(caPem), insecureSkipTlsVerify: false },
      user: { name: 'bootstrap', token: o.token.trim() },
    };
  }
  const ctx: CloudContext = await createCloudContext({
    kubeConfig: bootstrap,
    nodeName: o.nodeName,
    clock: o.clock,
    log: o.log,
  });
  try {
    const { keyPem, certPem } = await requestNodeCertificate(ctx, { timeoutMs: o.timeoutMs ?? 15 * 60_000 });
    const client = storeNodeCertificate(o.dataDir, keyPem, certPem);
    if (caPem) writePrivate(p.ca, caPem);
    const user = { 'client-certificate': client, 'client-key': client };
    const yaml = caPem
      ? kubeconfigYaml(server, p.ca, user, `system:node:${o.nodeName}`)
      : stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [
            {
              name: 'cloud',
              cluster: { server, 'insecure-skip-tls-verify': bootstrap.cluster.insecureSkipTlsVerify },
            },
          ],
          users: [{ name: 'node', user }],
          contexts: [{ name: 'node@cloud', context: { cluster: 'cloud', user: 'node' } }],
          'current-context': 'node@cloud',
        });
    writePrivate(p.kubeconfig, yaml);
    return p.kubeconfig;
  } finally {
    await ctx.close();
  }
}
