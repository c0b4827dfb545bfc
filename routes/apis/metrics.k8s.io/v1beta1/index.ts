import { apiGroups } from '#lib/http/discovery.ts';
import { factory } from '#lib/http/factory.ts';
import { NO_CACHE } from '#lib/http/negotiate.ts';

/** Discovery of metrics.k8s.io/v1beta1: what `kubectl top` looks for. */
export const GET = factory.createHandlers((c) => {
  const g = apiGroups.find((x) => x.name === 'metrics.k8s.io')!;
  const groupVersion = `${g.name}/${g.version}`;
  return c.json(
    { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources: g.resources },
    200,
    NO_CACHE,
  );
});
