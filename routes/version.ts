import { factory } from '#lib/http/factory.ts';
import { NO_CACHE } from '#lib/http/negotiate.ts';
import { versionInfo } from '#lib/version.ts';

export const GET = factory.createHandlers((c) => c.json(versionInfo(), 200, NO_CACHE));
