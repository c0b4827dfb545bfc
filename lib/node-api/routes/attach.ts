import { prepareAttachUpgrade } from '#lib/exec/accept.ts';
import { isSpdyUpgrade } from '#lib/exec/options.ts';
import { requireRuntime, runningInstance } from '#lib/pods/runtime/find-container.ts';
import { asApp, type NodeApiContext } from '../env.ts';
import { findPodByPath, validQuery } from '../params.ts';
import { streamQuery, streamsOf } from '../streams.ts';

/**
 * `GET|POST /attach/{ns}/{pod}[/{uid}]/{container}`: `kubectl attach` through the API server:
 * the container's own stdio (CRI Attach), over the same WebSocket or SPDY streams as exec.
 */
export async function POST(c: NodeApiContext) {
  const q = validQuery(c, streamQuery);
  const { pod, container } = findPodByPath(c);
  const target = await runningInstance(requireRuntime(c.var.cri), pod, container ?? '', c.var.shutdown);
  const kind = isSpdyUpgrade(c.req.raw.headers) ? 'spdy' : 'websocket';
  await prepareAttachUpgrade(asApp(c), target, streamsOf(q), kind);
  return c.body(null);
}

export const GET = POST;
