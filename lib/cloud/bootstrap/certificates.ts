// Node client certificates through the certificates API, as kubelet's TLS bootstrapping and
// rotation do: a new ECDSA P-256 key, a CSR for signer kubernetes.io/kube-apiserver-client-kubelet,
// wait until the cluster approves and signs it, keep key and certificate in DATA_DIR/pki (0600).
import { randomBytes, X509Certificate } from 'node:crypto';
import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CloudContext } from '../context.ts';
import { requestCertificate } from '../csr.ts';
import { certificateRequest, newKey } from '../x509.ts';

export const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';

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
 * Creates a CSR for the node with a fresh key and waits (reading it once a second; this runs once
 * per join or rotation) until it is signed. Resolves with the key and certificate PEMs.
 */
export async function requestNodeCertificate(
  ctx: CloudContext,
  o: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<{ keyPem: string; certPem: string; csrName: string }> {
  const { keyPem, csr } = nodeClientRequest(ctx.nodeName);
  const { certPem, csrName } = await requestCertificate(
    ctx,
    ctx.log,
    {
      request: csr,
      signerName: KUBELET_CLIENT_SIGNER,
      usages: ['digital signature', 'key encipherment', 'client auth'],
      generateName: 'node-csr-',
    },
    { timeoutMs: o.timeoutMs ?? 15 * 60_000, ...(o.signal ? { signal: o.signal } : {}) },
  );
  ctx.log.info({ csr: csrName, notAfter: new X509Certificate(certPem).validTo }, 'node certificate issued');
  return { keyPem, certPem, csrName };
}

/** Stores certificate and key together in DATA_DIR/pki (0600), replacing the pair atomically. */
export function storeNodeCertificate(dataDir: string, keyPem: string, certPem: string): string {
  const p = pkiPaths(dataDir);
  mkdirSync(p.dir, { recursive: true, mode: 0o700 });
  writePrivate(p.client, `${certPem.trimEnd()}\n${keyPem.trimEnd()}\n`);
  return p.client;
}
