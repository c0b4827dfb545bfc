import { factory } from '#lib/http/factory.ts';
import { NO_CACHE } from '#lib/http/negotiate.ts';
import { OPENAPI_GROUP_VERSIONS } from '#lib/http/openapi.ts';
import { OUTPOST_VERSION } from '#lib/version.ts';

/** OpenAPI v3 discovery: the group versions that have a document (kubectl edit reads it). */
export const GET = factory.createHandlers((c) =>
  c.json(
    {
      paths: Object.fromEntries(
        OPENAPI_GROUP_VERSIONS.map((gv) => [
          gv,
          { serverRelativeURL: `/openapi/v3/${gv}?hash=${OUTPOST_VERSION}` },
        ]),
      ),
    },
    200,
    NO_CACHE,
  ),
);
