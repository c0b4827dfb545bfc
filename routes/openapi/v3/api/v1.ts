import { factory } from '#lib/http/factory.ts';
import { serveOpenApiV3 } from '#lib/http/openapi.ts';

/** The OpenAPI v3 document of the core group (pods, configmaps, secrets, nodes, events, namespaces). */
export const GET = factory.createHandlers((c) => serveOpenApiV3(c, 'api/v1'));
