// Client certificate rotation while serving, as kubelet's certificate manager does: at a random
// point between 70% and 90% of the certificate's lifetime, a new key and CSR (the node's own
// identity may ask; the cluster auto-approves with the selfnodeclient role), then the file is
// replaced atomically and the transport reconnects with it. Only for kubeconfigs that name a
// certificate file (what `outpost join` writes); inline data has nowhere to be written back.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { CloudContext } from '../context.ts';
import { readKubeconfig } from '../kubeconfig.ts';
import { requestNodeCertificate, writePrivate } from './certificates.ts';

/** When to rotate: notBefore + lifetime × [0.7, 0.9), from `random`. */
export function rotationDeadline(
  notBefore: number,
  notAfter: number,
  random: () => number = Math.random,
): number {
  const r = Math.min(Math.max(random(), 0), 0.999_999);
  return notBefore + (notAfter - notBefore) * (0.7 + 0.2 * r);
}

const wait = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    // setTimeout holds at most 2^31-1 ms (24.8 days); a year-long certificate waits in steps.
    const t = setTimeout(resolve, Math.min(Math.max(ms, 0), 2 ** 31 - 1));
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

/** Rotates the node's client certificate for as long as `signal` is not aborted. */
export async function runCertificateRotation(
  ctx: CloudContext,
  kubeconfigPath: string,
  signal: AbortSignal,
  random: () => number = Math.random,
): Promise<void> {
  while (!signal.aborted) {
    const user = ctx.kubeConfig.user;
    if (!user?.certFile || !user.keyFile) return;
    const cert = new X509Certificate(readFileSync(user.certFile));
    const deadline = rotationDeadline(Date.parse(cert.validFrom), Date.parse(cert.validTo), random);
    ctx.log.info(
      { notAfter: cert.validTo, rotateAt: new Date(deadline).toISOString() },
      'client certificate rotation scheduled',
    );
    while (!signal.aborted && Date.now() < deadline) await wait(deadline - Date.now(), signal);
    if (signal.aborted) return;
    try {
      await ctx.link.waitOnline(signal);
      const { keyPem, certPem } = await requestNodeCertificate(ctx, { signal });
      if (user.certFile === user.keyFile)
        writePrivate(user.certFile, `${certPem.trimEnd()}\n${keyPem.trimEnd()}\n`);
      else {
        writePrivate(user.keyFile, keyPem);
        writePrivate(user.certFile, certPem);
      }
      await ctx.reloadCredentials(readKubeconfig(kubeconfigPath));
      ctx.log.info({ notAfter: new X509Certificate(certPem).validTo }, 'client certificate rotated');
    } catch (e) {
      if (signal.aborted) return;
      ctx.log.warn({ err: e }, 'client certificate rotation failed; retrying in 30 s');
      await wait(30_000, signal);
    }
  }
}
