import { preparePortForwardUpgrade } from '#lib/exec/port-forward.ts';
import { asApp, type NodeApiContext } from '../env.ts';
import { findPodByPath } from '../params.ts';

/**
 * `GET|POST /portForward/{ns}/{pod}[/{uid}]`: `kubectl port-forward` through the API server, SPDY
 * (`portforward.k8s.io`) or WebSocket, passed through to the runtime's port forwarding.
 */
export async function POST(c: NodeApiContext) {
  const { pod } = findPodByPath(c);
  await preparePortForwardUpgrade(asApp(c), pod);
  return c.body(null);
}

export const GET = POST;
