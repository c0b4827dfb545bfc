// Port forwarding into a pod (`kubectl port-forward`, through the API server's proxy to the node
// API): the runtime's streaming server does the forwarding (CRI PortForward into the pod's
// sandbox); Outpost checks the request and passes the client's upgrade through to it, as kubelet
// does with its CRI streaming redirect turned off.
import type { AppContext } from '#lib/http/env.ts';
import { badRequest, StatusError } from '#lib/kube/status.ts';
import type { Pod } from '#lib/kube/types.ts';
import { requireRuntime } from '#lib/pods/runtime/find-container.ts';
import { POD_UID } from '#lib/pods/runtime/labels.ts';
import { newestFirst } from '#lib/pods/runtime/view.ts';
import { isSpdyUpgrade, isWebSocketUpgrade, offeredProtocols } from './options.ts';
import { PORT_FORWARD_TUNNEL } from './spdy-tunnel.ts';
import { upgraderOf } from './upgrade.ts';

/** The WebSocket subprotocols the runtime's port forwarding speaks ("" = none offered). */
const WEBSOCKET_PORT_FORWARD = [
  'v4.channel.k8s.io',
  'v4.base64.channel.k8s.io',
  'channel.k8s.io',
  'base64.channel.k8s.io',
];

/** The `port` query values of a WebSocket port forward, checked as kubelet checks them. */
export function forwardedPorts(values: string[]): number[] {
  return values.map((v) => {
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < 1 || n > 65535)
      throw badRequest(`unable to parse "${v}" as a port: must be 1-65535`);
    return n;
  });
}

/**
 * Prepares a port forward to `pod` and hands the client's upgrade (SPDY `portforward.k8s.io`,
 * kubectl ≥ 1.31's SPDY-over-WebSocket tunnel, or a WebSocket with `?port=`) to the server's
 * upgrader; throws the Status the client gets instead. A WebSocket offering none of those
 * protocols gets 400, on which kubectl falls back to SPDY.
 */
export async function preparePortForwardUpgrade(c: AppContext, pod: Pod): Promise<void> {
  const headers = c.req.raw.headers;
  const upgrade = upgraderOf(c);
  const spdy = isSpdyUpgrade(headers);
  if (!upgrade || (!spdy && !isWebSocketUpgrade(headers))) throw badRequest('Upgrade request required');
  let query = '';
  const offered = spdy ? [] : offeredProtocols(headers);
  const tunnel = offered.includes(PORT_FORWARD_TUNNEL);
  if (!spdy && !tunnel) {
    if (offered.length && !offered.some((p) => WEBSOCKET_PORT_FORWARD.includes(p))) {
      throw badRequest(
        `none of the offered WebSocket subprotocols [${offered.join(' ')}] is supported for port forwarding: use SPDY/3.1`,
      );
    }
    const ports = forwardedPorts(c.req.queries('port') ?? []);
    if (ports.length === 0) throw badRequest('query parameter "port" is required');
    query = ports.map((p) => `port=${p}`).join('&');
  }
  const cri = requireRuntime(c.var.cri);
  const uid = pod.metadata.uid ?? '';
  const sandbox = (
    await cri.listPodSandbox({ labelSelector: { [POD_UID]: uid }, state: { state: 'SANDBOX_READY' } })
  ).sort(newestFirst)[0];
  if (!sandbox) {
    throw new StatusError(
      409,
      'Conflict',
      `pod ${pod.metadata.name} has no running sandbox to forward ports into`,
      {
        name: pod.metadata.name ?? '',
        kind: 'pods',
      },
    );
  }
  const url = await cri.portForward(sandbox.id);
  const leave = c.var.limits.exec.enter();
  if (tunnel) {
    upgrade({
      kind: 'tunnel',
      protocol: PORT_FORWARD_TUNNEL,
      session: { url, target: `${pod.metadata.namespace}/${pod.metadata.name}`, onEnd: leave },
    });
    return;
  }
  upgrade({
    kind: 'passthrough',
    session: {
      url: query ? `${url}${url.includes('?') ? '&' : '?'}${query}` : url,
      target: `${pod.metadata.namespace}/${pod.metadata.name}`,
      onEnd: leave,
    },
  });
}
