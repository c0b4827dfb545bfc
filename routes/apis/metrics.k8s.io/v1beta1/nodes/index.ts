import { factory } from '#lib/http/factory.ts';
import { nodeMetrics } from '#lib/http/resource-metrics.ts';

/** NodeMetrics of every node: this one (`kubectl top node`). */
export const GET = factory.createHandlers((c) => nodeMetrics(c));
