import { factory } from '#lib/http/factory.ts';
import { NO_CACHE } from '#lib/http/negotiate.ts';
import { OPENAPI_GROUP_VERSIONS, openApiV3 } from '#lib/http/openapi.ts';

/** OpenAPI v3 discovery: the group versions that have a document, each with its content hash. */
export const GET = factory.createHandlers((c) =>
  c.json(
    {
      paths: Object.fromEntries(
        OPENAPI_GROUP_VERSIONS.map((gv) => [
          gv,
          { serverRelativeURL: `/openapi/v3/${gv}?hash=${openApiV3(gv)!.hash}` },
        ]),
      ),
    },
    200,
    NO_CACHE,
  ),
);
