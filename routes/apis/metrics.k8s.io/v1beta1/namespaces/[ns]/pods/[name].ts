import { factory } from '#lib/http/factory.ts';
import { param } from '#lib/http/params.ts';
import { podMetrics } from '#lib/http/resource-metrics.ts';

/** PodMetrics of one pod (`kubectl top pod NAME --containers`). */
export const GET = factory.createHandlers((c) => podMetrics(c, param(c, 'ns'), param(c, 'name')));
