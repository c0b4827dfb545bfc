import { getOne } from '#lib/http/devices.ts';
import { factory } from '#lib/http/factory.ts';
import { param } from '#lib/http/params.ts';

/** One device model. */
export const GET = factory.createHandlers((c) => getOne(c, 'devicemodels', param(c, 'ns'), param(c, 'name')));
