import { factory } from '#lib/http/factory.ts';
import { openApiV2 } from '#lib/http/openapi.ts';

/** OpenAPI v2 for kubectl 1.27/1.28 (protobuf) and other clients (JSON). */
export const GET = factory.createHandlers((c) => {
  const { body, type } = openApiV2(/protobuf/.test(c.req.header('accept') ?? ''));
  return c.body(body, 200, { 'Content-Type': type, 'Cache-Control': 'no-cache, private' });
});
