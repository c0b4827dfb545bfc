// Just enough X.509 to get a certificate from a cluster: a P-256 key, a PKCS#10 certificate request
// (subject, SANs, key usages) for a CertificateSigningRequest, and a self-signed certificate to
// serve with until the cluster signs one. DER is written by hand: Node's crypto signs and parses
// certificates but cannot build them.
import { createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';

// ---- DER ----

function len(n: number): Buffer {
  if (n < 0x80) return Buffer.of(n);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const tlv = (tag: number, ...content: Buffer[]) => {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.of(tag), len(body.length), body]);
};
const seq = (...items: Buffer[]) => tlv(0x30, ...items);
const set = (...items: Buffer[]) => tlv(0x31, ...items);
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));
const octets = (b: Buffer) => tlv(0x04, b);
const bits = (b: Buffer, unused = 0) => tlv(0x03, Buffer.of(unused), b);
const bool = (v: boolean) => tlv(0x01, Buffer.of(v ? 0xff : 0));
function int(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0 && (b[i + 1]! & 0x80) === 0) i++;
  const v = b.subarray(i);
  return tlv(0x02, (v[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.of(0), v]) : v);
}
function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out = [a! * 40 + b!];
  for (const n of rest) {
    const chunk = [n & 0x7f];
    for (let v = n >>> 7; v > 0; v >>>= 7) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}
function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  // UTCTime until 2049, GeneralizedTime after (RFC 5280 4.1.2.5).
  return d.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`))
    : tlv(0x18, Buffer.from(`${iso}Z`));
}

const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  extensionRequest: '1.2.840.113549.1.9.14',
  subjectAltName: '2.5.29.17',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  basicConstraints: '2.5.29.19',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
};

// ---- What the callers say ----

export interface Subject {
  commonName: string;
  organizations?: string[];
}

export interface AltNames {
  dns?: string[];
  ips?: string[];
}

export type Usage = 'server auth' | 'client auth';

function name(s: Subject): Buffer {
  const rdn = (type: string, value: string) => set(seq(oid(type), utf8(value)));
  return seq(
    ...(s.organizations ?? []).map((o) => rdn(OID.organization, o)),
    rdn(OID.commonName, s.commonName),
  );
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  // IPv6: expand `::` and write eight 16-bit groups.
  const [head = '', tail = ''] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = ip.includes('::') && tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  const out = Buffer.alloc(16);
  for (const [i, g] of groups.entries()) out.writeUInt16BE(Number.parseInt(g, 16), i * 2);
  return out;
}

function extensions(alt: AltNames, usages: Usage[], ca = false): Buffer[] {
  const sans = [
    ...(alt.dns ?? []).map((d) => tlv(0x82, Buffer.from(d, 'ascii'))),
    ...(alt.ips ?? []).map((ip) => tlv(0x87, ipBytes(ip))),
  ];
  const ext = (id: string, value: Buffer, critical = false) =>
    seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));
  const out = [
    // A CA: digitalSignature (bit 0), keyCertSign (5) and cRLSign (6), one unused bit (Go refuses
    // a signer without keyCertSign). Otherwise digitalSignature and keyEncipherment (bit 2).
    ext(OID.keyUsage, ca ? bits(Buffer.of(0x86), 1) : bits(Buffer.of(0xa0), 5), true),
    ...(usages.length
      ? [
          ext(
            OID.extKeyUsage,
            seq(...usages.map((u) => oid(u === 'server auth' ? OID.serverAuth : OID.clientAuth))),
          ),
        ]
      : []),
    ext(OID.basicConstraints, seq(...(ca ? [bool(true)] : [])), true),
  ];
  if (sans.length) out.push(ext(OID.subjectAltName, seq(...sans)));
  return out;
}

const ALGORITHM = seq(oid(OID.ecdsaWithSha256));

function signed(tbs: Buffer, key: KeyObject): Buffer {
  return seq(tbs, ALGORITHM, bits(sign('sha256', tbs, key)));
}

const pem = (label: string, der: Buffer) =>
  `-----BEGIN ${label}-----\n${der.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END ${label}-----\n`;

// ---- Keys, requests, certificates ----

/** A new P-256 key pair; the private key as PKCS#8 PEM. */
export function newKey(): { privateKey: KeyObject; keyPem: string } {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { privateKey, keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

const spki = (key: KeyObject) => createPublicKey(key).export({ type: 'spki', format: 'der' });

/** A PKCS#10 request (PEM `CERTIFICATE REQUEST`) for `subject` with the SANs and usages asked for. */
export function certificateRequest(key: KeyObject, subject: Subject, alt: AltNames, usages: Usage[]): string {
  const requested = seq(oid(OID.extensionRequest), set(seq(...extensions(alt, usages))));
  const info = seq(int(Buffer.of(0)), name(subject), spki(key), tlv(0xa0, requested));
  return pem('CERTIFICATE REQUEST', signed(info, key));
}

/** A self-signed certificate (PEM) valid from an hour ago for `days`. */
export function selfSignedCertificate(
  key: KeyObject,
  subject: Subject,
  alt: AltNames,
  usages: Usage[],
  opts: { now?: number; days?: number } = {},
): string {
  return issueCertificate(key, subject, alt, usages, opts);
}

/**
 * A certificate (PEM) for `key`, valid from an hour ago for `days`: signed by `issuer` (a CA made
 * with `ca: true`), or self-signed without one.
 */
export function issueCertificate(
  key: KeyObject,
  subject: Subject,
  alt: AltNames,
  usages: Usage[],
  opts: { now?: number; days?: number; ca?: boolean; issuer?: { key: KeyObject; subject: Subject } } = {},
): string {
  const now = opts.now ?? Date.now();
  const issuer = opts.issuer ?? { key, subject };
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const tbs = seq(
    tlv(0xa0, int(Buffer.of(2))),
    int(serial),
    ALGORITHM,
    name(issuer.subject),
    seq(time(new Date(now - 3_600_000)), time(new Date(now + (opts.days ?? 365) * 86_400_000))),
    name(subject),
    spki(key),
    tlv(0xa3, seq(...extensions(alt, usages, opts.ca))),
  );
  return pem('CERTIFICATE', signed(tbs, issuer.key));
}
