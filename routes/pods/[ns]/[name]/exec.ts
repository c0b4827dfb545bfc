import * as z from 'zod';
import { runInContainer } from '#lib/exec/run.ts';
import { body, factory } from '#lib/http/factory.ts';
import { param } from '#lib/http/params.ts';
import { findRunningContainer, requireRuntime } from '#lib/pods/runtime/find-container.ts';

/** Default and ceiling of `timeoutSeconds`. */
const DEFAULT_TIMEOUT = 60;
const MAX_TIMEOUT = 3600;

const schema = z.strictObject({
  command: z.array(z.string()).min(1, 'must name at least one command'),
  container: z.string().min(1).optional(),
  stdin: z.string().optional(),
  timeoutSeconds: z.number().int().min(1).max(MAX_TIMEOUT).optional(),
});

/**
 * `POST /pods/{ns}/{name}/exec` for scripts: `{command, container?, stdin?, timeoutSeconds?}` runs
 * the command to completion and answers `{stdout, stderr, exitCode}`; a non-zero exit is a 200.
 */
export const POST = factory.createHandlers(body(schema, 'PodExecOptions'), async (c) => {
  const req = c.req.valid('json');
  // The audit trail records what was run (the command is in the body, not the query).
  c.set('auditDetail', { command: req.command, ...(req.container ? { container: req.container } : {}) });
  const target = await findRunningContainer(c.var, param(c, 'ns'), param(c, 'name'), req.container);
  const out = await runInContainer(requireRuntime(c.var.cri), target, req.command, {
    stdin: req.stdin,
    timeoutSeconds: req.timeoutSeconds ?? DEFAULT_TIMEOUT,
    // The agent's shutdown cancels the runtime call (a 503); a client going away does not.
    signal: c.var.shutdown,
  });
  return c.json({
    stdout: out.stdout.toString('utf8'),
    stderr: out.stderr.toString('utf8'),
    exitCode: out.exitCode,
  });
});
