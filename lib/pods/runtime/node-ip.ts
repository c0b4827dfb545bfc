import { readFileSync } from 'node:fs';
import { type NetworkInterfaceInfo, networkInterfaces } from 'node:os';

type Interfaces = NodeJS.Dict<NetworkInterfaceInfo[]>;

// Interfaces a container runtime, a CNI plugin or a hypervisor makes on the node: their addresses
// are the pods' or the guests' side, never the node's own.
const VIRTUAL = /^(cni|docker|veth|br-|virbr|flannel|cali|cilium|weave|vxlan|tunl|kube-|olab|lxc|podman)/;

/**
 * The interface of the IPv4 default route with the lowest metric, from /proc/net/route (the one
 * kubelet's `ChooseHostInterface` takes); undefined without one or off Linux.
 */
export function defaultRouteInterface(routes?: string): string | undefined {
  let text = routes;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/net/route', 'utf8');
    } catch {
      return undefined;
    }
  }
  let best: { iface: string; metric: number } | undefined;
  for (const line of text.split('\n').slice(1)) {
    const [iface, dest, , flags, , , metric, mask] = line.trim().split(/\s+/);
    if (!iface || dest !== '00000000' || mask !== '00000000') continue;
    if ((Number.parseInt(flags ?? '0', 16) & 1) === 0) continue; // RTF_UP
    const m = Number(metric);
    if (!best || m < best.metric) best = { iface, metric: m };
  }
  return best?.iface;
}

/**
 * The node's own IPv4 address: that of the default route's interface, else the first
 * non-loopback address of an interface that is not a bridge or veth of containers or guests, else
 * any non-loopback one. Undefined when the node has none.
 */
export function nodeIPv4(ifaces: Interfaces = networkInterfaces(), routes?: string): string | undefined {
  const v4 = (name: string) => ifaces[name]?.find((a) => a.family === 'IPv4' && !a.internal)?.address;
  const viaRoute = defaultRouteInterface(routes);
  const names = Object.keys(ifaces);
  return (
    (viaRoute && v4(viaRoute)) ??
    names
      .filter((n) => !VIRTUAL.test(n))
      .map(v4)
      .find(Boolean) ??
    names.map(v4).find(Boolean)
  );
}

/** The node's IPv4 address (what host-network pods report as their IP), 127.0.0.1 without one. */
export function nodeIP(): string {
  return nodeIPv4() ?? '127.0.0.1';
}
