import { compareGoStrings } from '#lib/kube/order.ts';
import type { Namespace } from '#lib/kube/printers/namespaces.ts';
import type { Store } from './index.ts';

/**
 * Namespaces are implied at the edge: every namespace that holds an object, plus `default`.
 * Each is Active, created when its oldest object was.
 */
export function listNamespaces(store: Store): Namespace[] {
  const rows = store.metabase.sqlite
    .prepare<[], { namespace: string; created: string | null }>(
      `SELECT namespace, MIN(json_extract(object, '$.metadata.creationTimestamp')) AS created FROM (
         SELECT namespace, object FROM pods UNION ALL SELECT namespace, object FROM objects
         UNION ALL SELECT namespace, object FROM devices UNION ALL SELECT namespace, object FROM events
       ) GROUP BY namespace ORDER BY namespace`,
    )
    .all();
  if (!rows.some((r) => r.namespace === 'default')) rows.push({ namespace: 'default', created: null });
  rows.sort((a, b) => compareGoStrings(a.namespace, b.namespace));
  return rows.map((r) => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: r.namespace,
      creationTimestamp: r.created,
      labels: { 'kubernetes.io/metadata.name': r.namespace },
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  }));
}
