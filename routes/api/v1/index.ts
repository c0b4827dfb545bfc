import { coreResources } from '#lib/http/discovery.ts';
import { factory } from '#lib/http/factory.ts';
import { NO_CACHE } from '#lib/http/negotiate.ts';

export const GET = factory.createHandlers((c) =>
  c.json(
    // The core group's list has no apiVersion on kube-apiserver (the named groups' lists do).
    { kind: 'APIResourceList', groupVersion: 'v1', resources: coreResources },
    200,
    NO_CACHE,
  ),
);
