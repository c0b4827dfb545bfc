import { factory } from '#lib/http/factory.ts';
import { param } from '#lib/http/params.ts';
import { restartPod } from '#lib/pods/worker/restart.ts';

/**
 * Restarts a pod in place: its running containers are stopped (never the sandbox) and the lifecycle
 * manager starts them again at once. Answers `{namespace, name, uid, stopped: [{container, id}]}`.
 */
export const POST = factory.createHandlers(async (c) =>
  c.json(await restartPod(c.var, param(c, 'ns'), param(c, 'name'))),
);
