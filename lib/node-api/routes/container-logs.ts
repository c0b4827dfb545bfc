import { logQuery, serveContainerLog } from '#lib/http/pod-log.ts';
import { asApp, type NodeApiContext } from '../env.ts';
import { findPodByPath, validQuery } from '../params.ts';

/**
 * `GET /containerLogs/{ns}/{pod}/{container}`: what the API server proxies `kubectl logs` to,
 * PodLogOptions as query parameters (follow, previous, timestamps, tailLines, sinceSeconds,
 * sinceTime, limitBytes), served by the local API's log code.
 */
export async function GET(c: NodeApiContext) {
  const q = validQuery(c, logQuery);
  const { pod, container } = findPodByPath(c);
  return serveContainerLog(asApp(c), pod, container ?? '', q);
}
