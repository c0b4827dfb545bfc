// The data directory's own small PKI, as kubeadm writes /etc/kubernetes/pki: a CA made on the first
// start and a serving certificate it signs for the addresses the API answers on, so the admin
// kubeconfig can carry its token over HTTPS (client-go sends tokens to https:// servers only).
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { type AltNames, issueCertificate, newKey, type Subject } from '#lib/cloud/x509.ts';
import type { TlsFiles } from './load.ts';

/**
 * Where a data directory keeps its local API's CA and serving certificate: beside the admin
 * credential (mode 0700, keys 0600). DATA_DIR/pki is the cluster's (outpost join, the node API).
 */
export const pkiDir = (dataDir: string): string => join(dataDir, 'auth');
/** The CA that signs the serving certificate; what a client trusts (`certificate-authority`). */
export const caPath = (dataDir: string): string => join(pkiDir(dataDir), 'ca.crt');

const CA_SUBJECT: Subject = { commonName: 'outpost-ca' };
const DAY = 86_400_000;

export interface ServingPki extends TlsFiles {
  /** The CA certificate (PEM) that verifies `cert`. */
  caPem: string;
}

/**
 * The names the API is reached by: loopback, localhost, the host's name, the listen address (or
 * every interface's address when it listens on all of them) and the node IP.
 */
export function servingNames(listenHost: string, nodeIp?: string): Required<AltNames> {
  const dns = new Set(['localhost']);
  // A host name that is not a DNS name (an underscore, say) cannot be a SAN; it is left out.
  const host = hostname().toLowerCase();
  if (/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(host)) dns.add(host);
  const ips = new Set(['127.0.0.1', '::1']);
  if (listenHost === '0.0.0.0' || listenHost === '::') {
    for (const list of Object.values(networkInterfaces()))
      for (const a of list ?? []) if (!a.address.includes('%')) ips.add(a.address);
  } else if (isIP(listenHost)) ips.add(listenHost);
  else if (/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/i.test(listenHost)) dns.add(listenHost.toLowerCase());
  if (nodeIp) ips.add(nodeIp);
  return { dns: [...dns].sort(), ips: [...ips].sort() };
}

/**
 * The CA (made once, kept for ten years) and a serving certificate for `names`, issued again when
 * it is missing, not signed by the CA, not covering every name, or within 30 days of expiry.
 */
export function ensureServingPki(dataDir: string, names: Required<AltNames>, now = Date.now()): ServingPki {
  const memory = dataDir === ':memory:'; // made for this run only, nothing written
  const dir = pkiDir(dataDir);
  if (!memory) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  }
  const write = memory ? () => {} : writeFile;
  const files = {
    caCert: caPath(dataDir),
    caKey: join(dir, 'ca.key'),
    cert: join(dir, 'api.crt'),
    key: join(dir, 'api.key'),
  };
  let ca = memory ? undefined : readPair(files.caCert, files.caKey);
  if (!ca || new X509Certificate(ca.cert).ca !== true || expiresWithin(ca.cert, now, 365 * DAY)) {
    const k = newKey();
    const cert = issueCertificate(k.privateKey, CA_SUBJECT, {}, [], { now, days: 3650, ca: true });
    write(files.caKey, k.keyPem, 0o600);
    write(files.caCert, cert, 0o644);
    ca = { cert, key: k.keyPem };
  }
  let serving = memory ? undefined : readPair(files.cert, files.key);
  if (!serving || !fits(serving.cert, ca.cert, names, now)) {
    const k = newKey();
    const cert = issueCertificate(k.privateKey, { commonName: 'outpost' }, names, ['server auth'], {
      now,
      days: 365,
      issuer: { key: createPrivateKey(ca.key), subject: CA_SUBJECT },
    });
    write(files.key, k.keyPem, 0o600);
    write(files.cert, cert, 0o644);
    serving = { cert, key: k.keyPem };
  }
  return { cert: Buffer.from(serving.cert), key: Buffer.from(serving.key), caPem: ca.cert };
}

function readPair(certFile: string, keyFile: string): { cert: string; key: string } | undefined {
  if (!existsSync(certFile) || !existsSync(keyFile)) return undefined;
  try {
    const cert = readFileSync(certFile, 'utf8');
    const key = readFileSync(keyFile, 'utf8');
    // Both parse and belong together, or they are made again.
    if (!new X509Certificate(cert).checkPrivateKey(createPrivateKey(key))) return undefined;
    return { cert, key };
  } catch {
    return undefined;
  }
}

const expiresWithin = (pem: string, now: number, ms: number) =>
  Date.parse(new X509Certificate(pem).validTo) - now < ms;

function fits(pem: string, caPem: string, names: Required<AltNames>, now: number): boolean {
  const cert = new X509Certificate(pem);
  if (!cert.checkIssued(new X509Certificate(caPem)) || !cert.verify(new X509Certificate(caPem).publicKey))
    return false;
  if (expiresWithin(pem, now, 30 * DAY)) return false;
  return (
    names.dns.every((d) => cert.checkHost(d, { wildcards: false }) !== undefined) &&
    names.ips.every((ip) => cert.checkIP(ip) !== undefined)
  );
}

function writeFile(path: string, text: string, mode: number): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}
