// A certificate from the cluster's certificates API (certificates.k8s.io/v1), as kubelet gets its
// client and serving certificates: create a CertificateSigningRequest, then read it until it is
// signed, denied or failed. Used by joining and rotation (client) and the node API (serving).
import { sleep } from '#lib/clock.ts';
import type { Logger } from '#lib/log.ts';
import { ApiError, type CloudContext } from './context.ts';
import { httpListWatch } from './list-watch.ts';

export interface CertificateRequestSpec {
  /** The PKCS#10 request, PEM. */
  request: string;
  signerName: string;
  usages: string[];
  /** `metadata.generateName` of the CertificateSigningRequest. */
  generateName: string;
}

export interface CertificateWaitOptions {
  signal?: AbortSignal;
  /** How often the request is read while pending (default 1 s). */
  pollMs?: number;
  /** Give up after this long (default: never). */
  timeoutMs?: number;
  /** Awaited when a read gets no answer, before the next (default: one poll interval). */
  whileUnreachable?: (signal?: AbortSignal) => Promise<void>;
  /**
   * Watches the request (by name, from a resourceVersion) while it is pending instead of reading it
   * every `pollMs`, as kubelet waits for its certificates: a request nobody approves then costs one
   * watch, renewed every 5-10 min, not a GET every few seconds (issue 22's fleet budget).
   */
  watch?: (name: string, resourceVersion: string) => AsyncIterable<{ type: string; object: unknown }>;
}

interface Csr {
  metadata: { name: string; resourceVersion?: string };
  status?: { certificate?: string; conditions?: { type: string; reason?: string; message?: string }[] };
}

/** The certificates API's collection of requests. */
export const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

/**
 * Creates the CertificateSigningRequest and waits until the cluster signs it; resolves with the
 * certificate (PEM) and the request's name. Throws when it is denied, failed or deleted, on an HTTP
 * error other than 429 and 5xx (those, like no answer at all, are waited out), at the timeout, and
 * with the signal's reason when it aborts.
 */
export async function requestCertificate(
  ctx: Pick<CloudContext, 'request'>,
  log: Logger,
  spec: CertificateRequestSpec,
  o: CertificateWaitOptions = {},
): Promise<{ certPem: string; csrName: string }> {
  const signal = o.signal ? { signal: o.signal } : {};
  const pollMs = o.pollMs ?? 1_000;
  const created = await ctx.request<Csr>(CSRS, {
    method: 'POST',
    ...signal,
    body: {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { generateName: spec.generateName },
      spec: {
        request: Buffer.from(spec.request).toString('base64'),
        signerName: spec.signerName,
        usages: spec.usages,
      },
    },
  });
  const name = created.metadata.name;
  log.info(
    { csr: name, signer: spec.signerName },
    `certificate signing request created; waiting for approval (kubectl certificate approve ${name})`,
  );
  let watchFailures = 0;
  const deadline = o.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + o.timeoutMs;
  for (;;) {
    o.signal?.throwIfAborted();
    let unreachable = false;
    const cur = await ctx.request<Csr>(`${CSRS}/${name}`, signal).catch((e: unknown) => {
      o.signal?.throwIfAborted();
      if (e instanceof ApiError && e.code === 404)
        throw new Error(`certificate signing request ${name} was deleted`);
      if (e instanceof ApiError && e.code !== 429 && e.code < 500) throw e;
      unreachable = !(e instanceof ApiError); // else an answer asking to wait
      return undefined;
    });
    const refused = cur?.status?.conditions?.find((c) => c.type === 'Denied' || c.type === 'Failed');
    if (refused)
      throw new Error(
        `certificate signing request ${name} ${refused.type.toLowerCase()}: ${refused.message ?? refused.reason ?? ''}`,
      );
    if (cur?.status?.certificate)
      return { certPem: Buffer.from(cur.status.certificate, 'base64').toString('utf8'), csrName: name };
    if (Date.now() > deadline)
      throw new Error(
        `certificate signing request ${name} was not approved within ${Math.round((o.timeoutMs ?? 0) / 1000)} s (approve it: kubectl certificate approve ${name})`,
      );
    if (unreachable && o.whileUnreachable) await o.whileUnreachable(o.signal);
    else if (cur && o.watch) {
      if (await waitForChange(o.watch(name, cur.metadata.resourceVersion ?? ''), o.signal)) watchFailures = 0;
      else await sleep(Math.min(pollMs * 2 ** watchFailures++, 60_000), o.signal);
    } else await sleep(pollMs, o.signal);
  }
}

/**
 * Watches one request by name from a consistent LIST of it (an object's own resourceVersion may be
 * older than an API server's watch cache, e.g. after a restart, and get 410). When the LIST already
 * shows it changed since `resourceVersion`, that is the one event.
 */
export async function* watchRequest(
  ctx: CloudContext,
  name: string,
  resourceVersion: string,
  signal: AbortSignal,
): AsyncGenerator<{ type: string; object: unknown }> {
  const fieldSelector = `metadata.name=${name}`;
  const list = await ctx.request<{ items: Csr[]; metadata: { resourceVersion: string } }>(CSRS, {
    query: { fieldSelector },
    signal,
  });
  const item = list.items[0];
  if (item?.metadata.resourceVersion !== resourceVersion) {
    yield { type: item ? 'MODIFIED' : 'DELETED', object: item ?? {} };
    return;
  }
  yield* httpListWatch(ctx, CSRS, fieldSelector).watch(list.metadata.resourceVersion, signal);
}

/**
 * Follows a watch of the pending request until it changes (then it is read again) or the server
 * ends the watch; false when the watch failed, so the caller backs off before reading again.
 */
async function waitForChange(
  events: AsyncIterable<{ type: string; object: unknown }>,
  signal?: AbortSignal,
): Promise<boolean> {
  try {
    for await (const e of events) if (e.type !== 'BOOKMARK') return e.type !== 'ERROR';
    return true;
  } catch {
    signal?.throwIfAborted();
    return false;
  }
}
