import type { KubeObject, Pod } from '#lib/kube/types.ts';
import type { Logger } from '#lib/log.ts';
import { TOKEN_KIND, type TokenSource, tokenName, tokenSources } from '#lib/pods/spec/references.ts';
import type { Store } from '#lib/store/index.ts';
import type { ApiRequest } from './api.ts';

interface StoredToken extends KubeObject {
  token: string;
  /** Unix ms. */
  issuedAt: number;
  expiresAt: number;
}

/**
 * Service-account tokens for the pods' `kube-api-access-*` projected volumes, through the
 * TokenRequest API as the Node authorizer allows it (bound to the pod, for its service account).
 * Tokens are kept in the metabase, so a restart while offline still mounts the last token, and
 * refreshed, like kubelet, once 80 % of their lifetime has passed.
 */
export class TokenManager {
  readonly #o: { store: Store; request: ApiRequest; log: Logger; now: () => number };

  constructor(o: { store: Store; request: ApiRequest; log: Logger; now?: () => number }) {
    this.#o = { ...o, now: o.now ?? Date.now };
  }

  /**
   * Requests the tokens that are missing or due for refresh, and drops those of pods gone.
   * Throws when the cloud cannot be reached (the caller retries once the link is back).
   */
  async refresh(): Promise<void> {
    const { store, now } = this.#o;
    const wanted = new Set<string>();
    for (const rec of store.pods.records({ source: 'cloud' })) {
      const pod = rec.desired;
      if (pod.metadata.deletionTimestamp) continue;
      for (const src of tokenSources(pod)) {
        const ns = rec.namespace;
        const name = tokenName(rec.uid, src);
        wanted.add(`${ns}/${name}`);
        const t = store.objects.get(TOKEN_KIND, ns, name) as StoredToken | undefined;
        if (t && now() < t.issuedAt + 0.8 * (t.expiresAt - t.issuedAt)) continue;
        await this.#issue(pod, src, name);
      }
    }
    for (const r of store.objects.records({ source: 'cloud' })) {
      if (r.kind === TOKEN_KIND && !wanted.has(`${r.namespace}/${r.name}`))
        store.objects.remove(r.kind, r.namespace, r.name);
    }
  }

  async #issue(pod: Pod, src: TokenSource, name: string): Promise<void> {
    const ns = pod.metadata.namespace ?? 'default';
    const sa = pod.spec.serviceAccountName ?? 'default';
    const r = await this.#o.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {
        audiences: src.audience ? [src.audience] : [],
        expirationSeconds: src.expirationSeconds ?? 3600,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid },
      },
    });
    const body = r.body as { status?: { token?: string; expirationTimestamp?: string }; message?: string };
    if (r.status >= 300 || !body?.status?.token) {
      this.#o.log.warn(
        { pod: `${ns}/${pod.metadata.name}`, code: r.status, reason: body?.message },
        'TokenRequest refused',
      );
      return;
    }
    const issuedAt = this.#o.now();
    const expiresAt =
      Date.parse(body.status.expirationTimestamp ?? '') || issuedAt + (src.expirationSeconds ?? 3600) * 1000;
    const stored: StoredToken = {
      apiVersion: 'v1',
      kind: TOKEN_KIND,
      metadata: { name, namespace: ns },
      token: body.status.token,
      issuedAt,
      expiresAt,
    };
    this.#o.store.objects.put(stored, 'cloud');
  }
}
