// Node client certificates through the certificates API, as kubelet's TLS bootstrapping and
// rotation do: a new ECDSA P-256 key, a CSR for signer kubernetes.io/kube-apiserver-client-kubelet,
// wait until the cluster approves and signs it, keep key and certificate in DATA_DIR/pki (0600).
import { randomBytes, X509Certificate } from 'node:crypto';
import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sleep } from '#lib/clock.ts';
import { ApiError, type CloudContext } from '../context.ts';
import { certificateRequest, newKey } from '../x509.ts';

export const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';

interface Csr {
  metadata: { name: string };
  status?: { certificate?: string; conditions?: { type: string; reason?: string; message?: string }[] };
}

/** Writes `data` to `path` with mode 0600, atomically (temporary file, then rename). */
export function writePrivate(path: string, data: string): void {
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, data, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** Where a node keeps its credentials: DATA_DIR/pki. */
export function pkiPaths(dataDir: string) {
  const dir = join(dataDir, 'pki');
  return {
    dir,
    /** Certificate and key in one file, replaced atomically (kubelet's kubelet-client-current.pem). */
    client: join(dir, 'node-client-current.pem'),
    ca: join(dir, 'ca.crt'),
    kubeconfig: join(dir, 'kubeconfig'),
  };
}

/**
 * A fresh P-256 key (SEC1 PEM, `EC PRIVATE KEY`, what kubelet writes) and a PKCS#10 request for the
 * node's client certificate: `CN=system:node:<node>, O=system:nodes`, client auth, no SANs.
 */
export function nodeClientRequest(node: string): { keyPem: string; csr: string } {
  const { privateKey } = newKey();
  const keyPem = privateKey.export({ type: 'sec1', format: 'pem' }).toString();
  const subject = { commonName: `system:node:${node}`, organizations: ['system:nodes'] };
  return { keyPem, csr: certificateRequest(privateKey, subject, {}, ['client auth']) };
}

/**
 * Creates a CSR for the node with a fresh key and waits (polling its object once a second; this
 * runs once per join or rotation) until it is signed. Resolves with the key and certificate PEMs.
 */
export async function requestNodeCertificate(
  ctx: CloudContext,
  o: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<{ keyPem: string; certPem: string; csrName: string }> {
  const { keyPem, csr } = nodeClientRequest(ctx.nodeName);
  const created = await ctx.request<Csr>('/apis/certificates.k8s.io/v1/certificatesigningrequests', {
    method: 'POST',
    ...(o.signal ? { signal: o.signal } : {}),
    body: {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { generateName: 'node-csr-' },
      spec: {
        request: Buffer.from(csr).toString('base64'),
        signerName: KUBELET_CLIENT_SIGNER,
        usages: ['digital signature', 'key encipherment', 'client auth'],
      },
    },
  });
  const name = created.metadata.name;
  ctx.log.info(
    { csr: name, node: ctx.nodeName },
    'certificate signing request created; waiting for approval',
  );
  const deadline = Date.now() + (o.timeoutMs ?? 15 * 60_000);
  for (;;) {
    const cur = await ctx
      .request<Csr>(`/apis/certificates.k8s.io/v1/certificatesigningrequests/${name}`, {
        ...(o.signal ? { signal: o.signal } : {}),
      })
      .catch((e) => {
        if (e instanceof ApiError) throw e;
        return undefined; // unreachable for a moment: keep waiting
      });
    const denied = cur?.status?.conditions?.find((c) => c.type === 'Denied' || c.type === 'Failed');
    if (denied)
      throw new Error(
        `certificate signing request ${name} ${denied.type.toLowerCase()}: ${denied.message ?? denied.reason ?? ''}`,
      );
    if (cur?.status?.certificate) {
      const certPem = Buffer.from(cur.status.certificate, 'base64').toString('utf8');
      ctx.log.info({ csr: name, notAfter: new X509Certificate(certPem).validTo }, 'node certificate issued');
      return { keyPem, certPem, csrName: name };
    }
    if (Date.now() > deadline)
      throw new Error(
        `certificate signing request ${name} was not approved within ${Math.round((o.timeoutMs ?? 900_000) / 1000)} s (approve it: kubectl certificate approve ${name})`,
      );
    await sleep(1_000, o.signal);
    o.signal?.throwIfAborted();
  }
}

/** Stores certificate and key together in DATA_DIR/pki (0600), replacing the pair atomically. */
export function storeNodeCertificate(dataDir: string, keyPem: string, certPem: string): string {
  const p = pkiPaths(dataDir);
  mkdirSync(p.dir, { recursive: true, mode: 0o700 });
  writePrivate(p.client, `${certPem.trimEnd()}\n${keyPem.trimEnd()}\n`);
  return p.client;
}
