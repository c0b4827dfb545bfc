import { preparePortForwardUpgrade } from '#lib/exec/port-forward.ts';
import { factory } from '#lib/http/factory.ts';
import { param } from '#lib/http/params.ts';
import { findPod } from '#lib/pods/runtime/find-container.ts';

/**
 * `POST .../pods/{name}/portforward`: `kubectl port-forward`'s SPDY upgrade (`portforward.k8s.io`),
 * passed through to the runtime's port forwarding into the pod's network namespace (the node's for
 * a host-network pod), which dials the port on the pod's localhost.
 */
export const POST = factory.createHandlers(async (c) => {
  const pod = findPod(c.var.store, param(c, 'ns'), param(c, 'name'));
  await preparePortForwardUpgrade(c, pod);
  return c.body(null);
});

/**
 * `GET .../pods/{name}/portforward`: the WebSocket form (`?port=`, `v4.channel.k8s.io`); kubectl
 * ≥ 1.31's SPDY-over-WebSocket tunnel (`SPDY/3.1+portforward.k8s.io`), tunnelled to the runtime.
 */
export const GET = POST;
