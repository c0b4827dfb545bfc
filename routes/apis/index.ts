import { apiGroups } from '#lib/http/discovery.ts';
import { factory } from '#lib/http/factory.ts';
import { NO_CACHE } from '#lib/http/negotiate.ts';

/** Legacy discovery of the named API groups. */
export const GET = factory.createHandlers((c) =>
  c.json(
    {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: apiGroups.map((g) => {
        const gv = { groupVersion: `${g.name}/${g.version}`, version: g.version };
        return { name: g.name, versions: [gv], preferredVersion: gv };
      }),
    },
    200,
    NO_CACHE,
  ),
);
