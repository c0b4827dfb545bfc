// The node API's serving certificate, as kubelet's `serverTLSBootstrap` gets it: a
// CertificateSigningRequest with signer `kubernetes.io/kubelet-serving` for
// `CN=system:node:<name>, O=system:nodes` and the node's addresses; self-signed until the cluster
// signs it (an admin or an approver must approve it: kube-controller-manager does not approve
// kubelet-serving requests by itself), kept in the data directory, and renewed at 70-90% of its
// lifetime with a new key.
import { X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Clock, sleep } from '#lib/clock.ts';
import type { Logger } from '#lib/log.ts';
import type { CloudContext } from './context.ts';
import { requestCertificate, watchRequest } from './csr.ts';
import { type AltNames, certificateRequest, newKey, selfSignedCertificate } from './x509.ts';

export const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';

export interface ServingPair {
  cert: string;
  key: string;
  /** Signed by the cluster (false: self-signed, waiting for approval). */
  issued: boolean;
  notAfter: number;
}

export interface ServingCertOptions {
  ctx: CloudContext;
  /** Where the issued pair is kept (`serving.crt`, `serving.key`). */
  dir: string;
  alt: AltNames;
  clock: Pick<Clock, 'now'>;
  log: Logger;
  /** Called with each new pair (the server swaps its TLS context). */
  onChange: (pair: ServingPair) => void;
  /** Back-off base when the watch of a pending request fails (default 2 s, doubling to 60 s). */
  pollMs?: number;
  /** Fraction of the lifetime after which a new certificate is requested (default 0.7-0.9, random). */
  rotateAt?: number;
}

/** The node API's serving certificate and its renewal loop. */
export class ServingCertificate {
  #pair: ServingPair;
  #lifetime = { from: 0, to: 0 };
  readonly #o: ServingCertOptions;
  readonly #rotateAt: number;

  constructor(o: ServingCertOptions) {
    this.#o = o;
    this.#rotateAt = o.rotateAt ?? 0.7 + Math.random() * 0.2;
    this.#pair = this.#load() ?? this.#selfSigned();
  }

  get current(): ServingPair {
    return this.#pair;
  }

  get #subject() {
    return { commonName: `system:node:${this.#o.ctx.nodeName}`, organizations: ['system:nodes'] };
  }

  #selfSigned(): ServingPair {
    const { privateKey, keyPem } = newKey();
    const now = this.#o.clock.now();
    const cert = selfSignedCertificate(privateKey, this.#subject, this.#o.alt, ['server auth'], { now });
    const notAfter = Date.parse(new X509Certificate(cert).validTo);
    this.#lifetime = { from: now, to: now };
    return { cert, key: keyPem, issued: false, notAfter };
  }

  /** The kept pair, when it is still valid and covers the addresses now asked for. */
  #load(): ServingPair | undefined {
    const crt = join(this.#o.dir, 'serving.crt');
    const key = join(this.#o.dir, 'serving.key');
    if (!existsSync(crt) || !existsSync(key)) return undefined;
    try {
      const cert = readFileSync(crt, 'utf8');
      const x = new X509Certificate(cert);
      const to = Date.parse(x.validTo);
      if (to <= this.#o.clock.now()) return undefined;
      const sans = x.subjectAltName ?? '';
      const covers = [
        ...(this.#o.alt.dns ?? []).map((d) => `DNS:${d}`),
        ...(this.#o.alt.ips ?? []).map((ip) => `IP Address:${ip}`),
      ].every((s) => sans.split(', ').includes(s));
      if (!covers) return undefined;
      this.#lifetime = { from: Date.parse(x.validFrom), to };
      return { cert, key: readFileSync(key, 'utf8'), issued: true, notAfter: to };
    } catch {
      return undefined;
    }
  }

  #save(pair: ServingPair): void {
    mkdirSync(this.#o.dir, { recursive: true, mode: 0o700 });
    const write = (name: string, text: string) => {
      const tmp = join(this.#o.dir, `.${name}.tmp`);
      writeFileSync(tmp, text, { mode: 0o600 });
      chmodSync(tmp, 0o600);
      renameSync(tmp, join(this.#o.dir, name));
    };
    write('serving.key', pair.key);
    write('serving.crt', pair.cert);
  }

  /** When a new certificate is due: at once while self-signed. */
  dueAt(): number {
    if (!this.#pair.issued) return 0;
    const { from, to } = this.#lifetime;
    return from + (to - from) * this.#rotateAt;
  }

  /** Requests certificates whenever one is due, until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { log, clock } = this.#o;
    let failures = 0;
    while (!signal.aborted) {
      const wait = this.dueAt() - clock.now();
      if (wait > 0) {
        await sleep(Math.min(wait, 60_000), signal);
        continue;
      }
      try {
        await this.#o.ctx.link.waitOnline(signal);
        const pair = await this.#request(signal);
        this.#pair = pair;
        this.#save(pair);
        this.#o.onChange(pair);
        failures = 0;
        log.info({ notAfter: new Date(pair.notAfter).toISOString() }, 'node API serving certificate issued');
      } catch (e) {
        if (signal.aborted) return;
        failures++;
        log.warn({ err: (e as Error).message }, 'serving certificate request failed; retrying');
        await sleep(Math.min(1000 * 2 ** failures, 60_000), signal);
      }
    }
  }

  /** One CSR, waited on until signed. Throws when denied, failed or aborted. */
  async #request(signal: AbortSignal): Promise<ServingPair> {
    const { ctx, log } = this.#o;
    const { privateKey, keyPem } = newKey();
    const { certPem: cert } = await requestCertificate(
      ctx,
      log,
      {
        request: certificateRequest(privateKey, this.#subject, this.#o.alt, ['server auth']),
        signerName: KUBELET_SERVING_SIGNER,
        usages: ['digital signature', 'key encipherment', 'server auth'],
        generateName: 'csr-',
      },
      {
        signal,
        pollMs: this.#o.pollMs ?? 2000,
        whileUnreachable: (s) => ctx.link.waitOnline(s),
        watch: (name, rv) => watchRequest(ctx, name, rv, signal),
      },
    );
    const x = new X509Certificate(cert);
    this.#lifetime = { from: Date.parse(x.validFrom), to: Date.parse(x.validTo) };
    return { cert, key: keyPem, issued: true, notAfter: this.#lifetime.to };
  }
}
