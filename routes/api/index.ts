import { factory } from '#lib/http/factory.ts';
import { NO_CACHE } from '#lib/http/negotiate.ts';

/** Legacy discovery: the core group's versions. */
export const GET = factory.createHandlers((c) =>
  c.json(
    {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: c.req.header('host') ?? '' }],
    },
    200,
    NO_CACHE,
  ),
);
