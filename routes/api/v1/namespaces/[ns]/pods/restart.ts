import * as z from 'zod';
import { factory } from '#lib/http/factory.ts';
import { param } from '#lib/http/params.ts';
import { badRequest, StatusError } from '#lib/kube/status.ts';
import { restartPods } from '#lib/pods/worker/restart.ts';

const podNames = z
  .array(z.string().min(1, 'a pod name must not be empty'), 'expected a JSON array of pod names')
  .min(1, 'at least one pod name is required')
  .max(1000, 'at most 1000 pod names at once');

/**
 * KubeEdge MetaServer's restart (what `keadm ctl restart pod` sends): a JSON array of pod names,
 * answered with `{"errMessages":[...],"LogMessages":[...]}`. Upstream answers 200 even when pods
 * failed; Outpost answers 200 only when all restarted, else the highest failure code, same body.
 */
export const POST = factory.createHandlers(async (c) => {
  // Like upstream, the body is read as JSON whatever the Content-Type (curl -d sends a form type).
  const text = await c.req.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw badRequest(`request body is not valid JSON: ${(e as Error).message}`);
  }
  const result = podNames.safeParse(parsed);
  if (!result.success) {
    const causes = result.error.issues.map((i) => ({
      reason: 'FieldValueInvalid',
      field: i.path.map(String).join('.'),
      message: i.message,
    }));
    throw new StatusError(
      422,
      'Invalid',
      `RestartRequest is invalid: ${causes.map((c) => `${c.field ? `[${c.field}]` : '<body>'}: ${c.message}`).join(', ')}`,
      { kind: 'RestartRequest', causes },
    );
  }
  const { code, response } = await restartPods(c.var, param(c, 'ns'), result.data);
  return c.json(response, code as 200);
});
