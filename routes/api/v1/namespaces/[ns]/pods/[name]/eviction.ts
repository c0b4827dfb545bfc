import { factory } from '#lib/http/factory.ts';
import { param } from '#lib/http/params.ts';
import { evictPod } from '#lib/http/pod-delete.ts';

/** Evict a pod (kubectl drain): a graceful delete; there are no disruption budgets on a node. */
export const POST = factory.createHandlers((c) => evictPod(c, param(c, 'ns'), param(c, 'name')));
