import { coreResources } from '#lib/http/discovery.ts';
import { factory } from '#lib/http/factory.ts';
import { NO_CACHE } from '#lib/http/negotiate.ts';

export const GET = factory.createHandlers((c) =>
  c.json(
    { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'v1', resources: coreResources },
    200,
    NO_CACHE,
  ),
);
