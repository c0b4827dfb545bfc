import { factory } from '#lib/http/factory.ts';
import { serveOpenApiV3 } from '#lib/http/openapi.ts';

/** The OpenAPI v3 document of devices.kubeedge.io/v1beta1 (devices, devicemodels). */
export const GET = factory.createHandlers((c) => serveOpenApiV3(c, 'apis/devices.kubeedge.io/v1beta1'));
