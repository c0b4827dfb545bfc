import * as z from 'zod';
import { runInContainer } from '#lib/exec/run.ts';
import { badRequest } from '#lib/kube/status.ts';
import { requireRuntime, runningInstance } from '#lib/pods/runtime/find-container.ts';
import type { NodeApiContext } from '../env.ts';
import { findPodByPath, validQuery } from '../params.ts';

const RUN_TIMEOUT_SECONDS = 60;

/**
 * `POST /run/{ns}/{pod}[/{uid}]/{container}?cmd=...`: runs a command to completion and answers
 * its output (stdout then stderr), as kubelet's run handler does; the command is split at spaces.
 */
export async function POST(c: NodeApiContext) {
  const q = validQuery(c, z.object({ cmd: z.string().optional() }));
  const command = (q.cmd ?? '').split(/\s+/).filter(Boolean);
  if (command.length === 0) throw badRequest('missing command: query parameter "cmd" is required');
  const { pod, container } = findPodByPath(c);
  const cri = requireRuntime(c.var.cri);
  const target = await runningInstance(cri, pod, container ?? '', c.var.shutdown);
  // The agent's shutdown cancels the command's ExecSync (a 503); a client going away does not.
  const out = await runInContainer(cri, target, command, {
    timeoutSeconds: RUN_TIMEOUT_SECONDS,
    signal: c.var.shutdown,
  });
  return c.body(new Uint8Array(Buffer.concat([out.stdout, out.stderr])), 200, {
    'Content-Type': 'text/plain',
  });
}
