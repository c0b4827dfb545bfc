import { apiGroups } from '#lib/http/discovery.ts';
import { factory } from '#lib/http/factory.ts';
import { NO_CACHE } from '#lib/http/negotiate.ts';

/** Discovery of the metrics.k8s.io group (metav1.APIGroup). */
export const GET = factory.createHandlers((c) => {
  const g = apiGroups.find((x) => x.name === 'metrics.k8s.io')!;
  const gv = { groupVersion: `${g.name}/${g.version}`, version: g.version };
  return c.json(
    { kind: 'APIGroup', apiVersion: 'v1', name: g.name, versions: [gv], preferredVersion: gv },
    200,
    NO_CACHE,
  );
});
