import { apiGroups } from '#lib/http/discovery.ts';
import { factory } from '#lib/http/factory.ts';
import { NO_CACHE } from '#lib/http/negotiate.ts';

/** Discovery of the devices.kubeedge.io group (metav1.APIGroup). */
export const GET = factory.createHandlers((c) => {
  const g = apiGroups.find((x) => x.name === 'devices.kubeedge.io')!;
  const gv = { groupVersion: `${g.name}/${g.version}`, version: g.version };
  return c.json(
    { kind: 'APIGroup', apiVersion: 'v1', name: g.name, versions: [gv], preferredVersion: gv },
    200,
    NO_CACHE,
  );
});
