import { apiGroups } from '#lib/http/discovery.ts';
import { factory } from '#lib/http/factory.ts';
import { NO_CACHE } from '#lib/http/negotiate.ts';

/** Discovery of devices.kubeedge.io/v1beta1: what `kubectl get devices` needs to find the resource. */
export const GET = factory.createHandlers((c) => {
  const g = apiGroups.find((x) => x.name === 'devices.kubeedge.io')!;
  const groupVersion = `${g.name}/${g.version}`;
  return c.json(
    { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources: g.resources },
    200,
    NO_CACHE,
  );
});
