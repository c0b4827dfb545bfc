// A free loopback TCP port for a server that a test, a bench or the cloud lab starts next.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The first port of the kernel's ephemeral range (what `bind(0)` and `connect()` hand out). */
function ephemeralStart(): number {
  try {
    return (
      Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768
    );
  } catch {
    return 32768;
  }
}

/** The port listened on at 127.0.0.1 (`port`, or the kernel's pick for 0), closed again; -1 when it cannot be. */
function listenable(port: number): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(-1));
    srv.listen(port, '127.0.0.1', () => {
      const addr = srv.address() as { port: number };
      srv.close(() => resolve(addr.port));
    });
  });
}

/**
 * A free loopback TCP port, below the kernel's ephemeral range when there is room: a port from
 * that range can be taken, between the check and a server's bind, as the local port of any
 * outgoing connection on the machine (the API servers' etcd clients, every test's HTTP clients),
 * and a control plane's ports must also stay free while its API server is stopped for a link cut.
 */
export async function freePort(): Promise<number> {
  const high = ephemeralStart();
  const low = Math.max(10_000, high - 12_000);
  for (let i = 0; high - low >= 1_000 && i < 50; i++) {
    const port = await listenable(low + Math.floor(Math.random() * (high - low)));
    if (port > 0) return port;
  }
  const port = await listenable(0);
  if (port <= 0) throw new Error('no free loopback port');
  return port;
}
