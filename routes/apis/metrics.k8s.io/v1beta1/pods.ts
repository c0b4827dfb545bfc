import { factory } from '#lib/http/factory.ts';
import { podMetrics } from '#lib/http/resource-metrics.ts';

/** PodMetrics in every namespace (`kubectl top pod -A`). */
export const GET = factory.createHandlers((c) => podMetrics(c));
