import { factory } from '#lib/http/factory.ts';
import { NO_CACHE } from '#lib/http/negotiate.ts';
import { devicesOpenApi } from '#lib/http/openapi.ts';

/** The OpenAPI v3 document of devices.kubeedge.io/v1beta1. */
export const GET = factory.createHandlers((c) => c.json(devicesOpenApi(), 200, NO_CACHE));
