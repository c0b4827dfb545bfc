// A PKCS#10 certificate signing request for an ECDSA P-256 key, DER-encoded by hand (Node's
// crypto signs and exports keys but builds no CSRs): subject O=system:nodes, CN=system:node:<name>,
// no attributes, signed with ecdsa-with-SHA256 (RFC 2986, RFC 5758).
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';

const tlv = (tag: number, body: Buffer): Buffer => {
  const n = body.length;
  const len =
    n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), len, body]);
};
const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
  const bytes = [40 * a + b];
  for (const n of rest) {
    const chunk = [n & 0x7f];
    for (let v = n >> 7; v > 0; v >>= 7) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

const OID = { O: '2.5.4.10', CN: '2.5.4.3', ecdsaWithSHA256: '1.2.840.10045.4.3.2' };
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));

/** An X.501 Name of (type, value) pairs, one attribute per RDN, in the given order. */
const name = (attrs: [string, string][]) => seq(...attrs.map(([t, v]) => set(seq(oid(t), utf8(v)))));

/** A new ECDSA P-256 private key as SEC1 PEM (`EC PRIVATE KEY`, what kubelet writes). */
export function newNodeKey(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return privateKey.export({ type: 'sec1', format: 'pem' }).toString();
}

/** The CSR (PEM) for `CN=system:node:<node>, O=system:nodes`, signed by `keyPem`. */
export function nodeCsr(keyPem: string, node: string): string {
  const key: KeyObject = createPrivateKey(keyPem);
  const spki = createPublicKeyDer(key);
  const info = seq(
    tlv(0x02, Buffer.from([0])), // version v1(0)
    name([
      [OID.O, 'system:nodes'],
      [OID.CN, `system:node:${node}`],
    ]),
    spki,
    tlv(0xa0, Buffer.alloc(0)), // attributes [0] IMPLICIT SET, empty
  );
  const signature = sign('sha256', info, key); // DER ECDSA-Sig-Value
  const der = seq(
    info,
    seq(oid(OID.ecdsaWithSHA256)),
    tlv(0x03, Buffer.concat([Buffer.from([0]), signature])),
  );
  const b64 = der.toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN CERTIFICATE REQUEST-----\n${b64.trimEnd()}\n-----END CERTIFICATE REQUEST-----\n`;
}

const createPublicKeyDer = (key: KeyObject): Buffer =>
  createPublicKey(key).export({ type: 'spki', format: 'der' });
