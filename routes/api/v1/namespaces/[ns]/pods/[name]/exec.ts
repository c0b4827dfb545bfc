import { prepareExecUpgrade } from '#lib/exec/accept.ts';
import { execOptions, execQuery, isSpdyUpgrade } from '#lib/exec/options.ts';
import { runInContainer } from '#lib/exec/run.ts';
import { factory, query } from '#lib/http/factory.ts';
import { param } from '#lib/http/params.ts';
import { badRequest } from '#lib/kube/status.ts';
import { findRunningContainer, requireRuntime } from '#lib/pods/runtime/find-container.ts';

/** keadm's non-TTY exec runs with this deadline (upstream edgecore: 10 s). */
const KEADM_TIMEOUT = 60;

/**
 * `GET .../pods/{name}/exec`: kubectl ≥ 1.30's WebSocket (`v5.channel.k8s.io`, or v4), relayed to
 * the runtime's streaming server.
 */
export const GET = factory.createHandlers(query(execQuery), async (c) => {
  const opts = execOptions(c.req.valid('query'));
  const target = await findRunningContainer(c.var, param(c, 'ns'), param(c, 'name'), opts.container);
  await prepareExecUpgrade(c, target, opts, 'websocket');
  return c.body(null);
});

/**
 * `POST .../pods/{name}/exec`: a SPDY upgrade (kubectl ≤ 1.29, `keadm ctl exec -t`) is passed
 * through to the runtime; a plain POST is keadm's non-TTY exec, answered with its `ExecResponse`
 * (`runErrMessages` carries stderr even when stdout is empty, unlike edgecore).
 */
export const POST = factory.createHandlers(query(execQuery), async (c) => {
  const opts = execOptions(c.req.valid('query'));
  const target = await findRunningContainer(c.var, param(c, 'ns'), param(c, 'name'), opts.container);
  if (isSpdyUpgrade(c.req.raw.headers)) {
    await prepareExecUpgrade(c, target, opts, 'spdy');
    return c.body(null);
  }
  if (opts.tty) throw badRequest('Upgrade request required');
  const out = await runInContainer(requireRuntime(c.var.cri), target, opts.command, {
    timeoutSeconds: KEADM_TIMEOUT,
    // The agent's shutdown cancels the runtime call (a 503); a client going away does not.
    signal: c.var.shutdown,
  });
  const text = (b: Buffer) => (b.length ? [b.toString('utf8')] : []);
  return c.json({
    errMessages: out.exitCode === 0 ? [] : [`command terminated with non-zero exit code: ${out.exitCode}`],
    runOutMessages: text(out.stdout),
    runErrMessages: text(out.stderr),
  });
});
