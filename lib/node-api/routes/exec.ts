import { prepareExecUpgrade } from '#lib/exec/accept.ts';
import { isSpdyUpgrade } from '#lib/exec/options.ts';
import { badRequest } from '#lib/kube/status.ts';
import { requireRuntime, runningInstance } from '#lib/pods/runtime/find-container.ts';
import { asApp, type NodeApiContext } from '../env.ts';
import { findPodByPath, validQuery } from '../params.ts';
import { streamQuery, streamsOf } from '../streams.ts';

/**
 * `GET|POST /exec/{ns}/{pod}[/{uid}]/{container}`: the exec the API server proxies: a WebSocket
 * (`v5.channel.k8s.io` or v4, relayed to the runtime) or a SPDY upgrade (passed through to it),
 * by the local API's exec code.
 */
export async function POST(c: NodeApiContext) {
  const q = validQuery(c, streamQuery);
  const command = q.command ?? [];
  if (command.length === 0) throw badRequest('you must specify at least one command for the container');
  const { pod, container } = findPodByPath(c);
  const target = await runningInstance(requireRuntime(c.var.cri), pod, container ?? '', c.var.shutdown);
  const kind = isSpdyUpgrade(c.req.raw.headers) ? 'spdy' : 'websocket';
  await prepareExecUpgrade(asApp(c), target, { command, container, ...streamsOf(q) }, kind);
  return c.body(null);
}

export const GET = POST;
