import type { Pod } from '#lib/kube/types.ts';

/** The metabase kind (objects table, never served) that holds pods' service-account tokens. */
export const TOKEN_KIND = 'ServiceAccountToken';

/** A projected `serviceAccountToken` source. */
export type TokenSource = { audience?: string; expirationSeconds?: number; path: string };

/** The ConfigMaps and Secrets a pod uses (volumes, projected sources, env, envFrom), as `Kind/ns/name`. */
export function referencedObjects(pod: Pod): Set<string> {
  const ns = pod.metadata.namespace ?? 'default';
  const out = new Set<string>();
  const add = (kind: 'ConfigMap' | 'Secret', name: unknown) => {
    if (typeof name === 'string' && name) out.add(`${kind}/${ns}/${name}`);
  };
  type Src = { configMap?: { name?: string }; secret?: { name?: string; secretName?: string } };
  for (const v of (pod.spec.volumes ?? []) as (Src & { projected?: { sources?: Src[] } })[]) {
    add('ConfigMap', v.configMap?.name);
    add('Secret', v.secret?.secretName);
    for (const s of v.projected?.sources ?? []) {
      add('ConfigMap', s.configMap?.name);
      add('Secret', s.secret?.name);
    }
  }
  type Ref = { name?: string };
  type C = {
    env?: { valueFrom?: { configMapKeyRef?: Ref; secretKeyRef?: Ref } }[];
    envFrom?: { configMapRef?: Ref; secretRef?: Ref }[];
  };
  for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers] as C[]) {
    for (const e of c.env ?? []) {
      add('ConfigMap', e.valueFrom?.configMapKeyRef?.name);
      add('Secret', e.valueFrom?.secretKeyRef?.name);
    }
    for (const e of c.envFrom ?? []) {
      add('ConfigMap', e.configMapRef?.name);
      add('Secret', e.secretRef?.name);
    }
  }
  return out;
}

/** The projected serviceAccountToken sources of a pod. */
export function tokenSources(pod: Pod): TokenSource[] {
  const out: TokenSource[] = [];
  type Vol = { projected?: { sources?: { serviceAccountToken?: TokenSource }[] } };
  for (const v of (pod.spec.volumes ?? []) as Vol[]) {
    for (const s of v.projected?.sources ?? []) if (s.serviceAccountToken) out.push(s.serviceAccountToken);
  }
  return out;
}

/** The stored token's name: one per pod, lifetime and audience (what a TokenRequest is asked with). */
export function tokenName(podUid: string, src: TokenSource): string {
  return `${podUid}.${src.expirationSeconds ?? 3600}.${src.audience ?? ''}`;
}
