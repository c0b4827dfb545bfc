import { factory } from '#lib/http/factory.ts';
import { param } from '#lib/http/params.ts';
import { nodeMetrics } from '#lib/http/resource-metrics.ts';

/** NodeMetrics of this node. */
export const GET = factory.createHandlers((c) => nodeMetrics(c, param(c, 'name')));
