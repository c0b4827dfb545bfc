// Token discovery as `kubeadm join` does it: the cluster-info ConfigMap in kube-public is read
// without trusting the server yet, its kubeconfig must carry a detached JWS (HS256, key = the
// bootstrap token's secret, kid = its id) made by the bootstrap signer, and the CA inside must
// match one of the pinned `sha256:<hex>` hashes of its SubjectPublicKeyInfo.
import { createHash, createHmac, timingSafeEqual, X509Certificate } from 'node:crypto';
import { parse } from 'yaml';

/** A bootstrap token `[a-z0-9]{6}.[a-z0-9]{16}`. */
export interface BootstrapToken {
  id: string;
  secret: string;
}

/** Parses `ID.SECRET`; throws on anything else. */
export function parseToken(token: string): BootstrapToken {
  const m = /^([a-z0-9]{6})\.([a-z0-9]{16})$/.exec(token.trim());
  if (!m) throw new Error('--token: expected a bootstrap token ID.SECRET ([a-z0-9]{6}.[a-z0-9]{16})');
  return { id: m[1] as string, secret: m[2] as string };
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/** The detached JWS the bootstrap signer computes over `content` (for tests and symmetry). */
export function detachedSignature(content: string, token: BootstrapToken): string {
  const header = b64url(JSON.stringify({ alg: 'HS256', kid: token.id }));
  const sig = createHmac('sha256', token.secret)
    .update(`${header}.${b64url(content)}`)
    .digest();
  return `${header}..${b64url(sig)}`;
}

/** Whether `jws` (header..signature) is a valid HS256 signature of `content` by `token`. */
export function verifyDetachedSignature(content: string, jws: string, token: BootstrapToken): boolean {
  const parts = jws.split('.');
  if (parts.length !== 3 || parts[1] !== '') return false;
  const [header, , sig] = parts as [string, string, string];
  let h: { alg?: unknown; kid?: unknown };
  try {
    h = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
  } catch {
    return false;
  }
  if (h.alg !== 'HS256' || (h.kid !== undefined && h.kid !== token.id)) return false;
  const expected = createHmac('sha256', token.secret)
    .update(`${header}.${b64url(content)}`)
    .digest();
  const given = Buffer.from(sig, 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** `sha256:<hex>` of a certificate's DER SubjectPublicKeyInfo (kubeadm's --discovery-token-ca-cert-hash). */
export function caCertHash(pem: string | Buffer): string {
  const spki = new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
}

/** Normalizes a pinned hash; throws unless it is `sha256:` and 64 hex digits. */
export function parseCaHash(h: string): string {
  const m = /^sha256:([0-9a-fA-F]{64})$/.exec(h.trim());
  if (!m) throw new Error(`--ca-cert-hash ${JSON.stringify(h)}: expected sha256:<64 hex digits>`);
  return `sha256:${(m[1] as string).toLowerCase()}`;
}

export interface ClusterInfo {
  server: string;
  caPem: string;
}

/**
 * Checks the cluster-info ConfigMap's data: the token's JWS over the kubeconfig, then the CA
 * against the pins. Returns the server and CA to trust from now on; throws with the reason.
 */
export function verifyClusterInfo(
  data: Record<string, string> | undefined,
  token: BootstrapToken,
  pins: string[],
): ClusterInfo {
  const kubeconfig = data?.kubeconfig;
  if (!kubeconfig) throw new Error('cluster-info has no kubeconfig');
  const jws = data?.[`jws-kubeconfig-${token.id}`];
  if (!jws)
    throw new Error(
      `cluster-info has no signature for token ${token.id} (unknown or expired token, or no bootstrap signer)`,
    );
  if (!verifyDetachedSignature(kubeconfig, jws, token))
    throw new Error(`cluster-info's signature does not match token ${token.id}: refusing the server`);
  const cluster = (parse(kubeconfig) as { clusters?: { cluster?: Record<string, string> }[] } | null)
    ?.clusters?.[0]?.cluster;
  const server = cluster?.server;
  const caData = cluster?.['certificate-authority-data'];
  if (!server || !caData)
    throw new Error('cluster-info kubeconfig lacks server or certificate-authority-data');
  const caPem = Buffer.from(caData, 'base64').toString('utf8');
  const hash = caCertHash(caPem);
  if (!pins.includes(hash))
    throw new Error(`the cluster CA's hash ${hash} matches none of --ca-cert-hash: refusing the server`);
  return { server, caPem };
}
