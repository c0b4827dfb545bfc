// kubectl ≥ 1.31's port forwarding over a WebSocket: the WebSocket (subprotocol
// `SPDY/3.1+portforward.k8s.io`) is only a tunnel whose binary messages carry the bytes of a SPDY
// session, as the API server's tunneling handler serves it. Outpost opens the SPDY upgrade to the
// runtime's port forwarding itself and copies bytes between the tunnel and the runtime's socket.
import { request } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';

/** The WebSocket subprotocol of client-go's SPDY-over-WebSocket port forwarding. */
export const PORT_FORWARD_TUNNEL = 'SPDY/3.1+portforward.k8s.io';

/**
 * Connects the tunnel `ws` to the runtime's port forwarding at `url` (a CRI PortForward URL);
 * calls `done` once, when either side ends. A refusal by the runtime closes the WebSocket with
 * 1011 and the runtime's answer as the reason.
 */
export function tunnelSpdy(ws: WebSocket, url: string, done: () => void): void {
  let upstream: Duplex | undefined;
  const pending: Buffer[] = [];
  let finished = false;
  const finish = (code: number, reason: string) => {
    if (finished) return;
    finished = true;
    upstream?.destroy();
    req.destroy();
    if (ws.readyState === ws.OPEN) ws.close(code, reason.slice(0, 120));
    done();
  };
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (!isBinary) return;
    if (upstream) upstream.write(data);
    else pending.push(data);
  });
  ws.on('close', () => finish(1000, ''));
  ws.on('error', () => finish(1011, 'tunnel error'));
  const req = request(url, {
    method: 'POST',
    agent: false,
    headers: {
      Connection: 'Upgrade',
      Upgrade: 'SPDY/3.1',
      'X-Stream-Protocol-Version': 'portforward.k8s.io',
      'Content-Length': '0',
    },
  });
  req.on('upgrade', (_res, socket, head) => {
    if (finished) return socket.destroy();
    socket.setTimeout(0);
    socket.setNoDelay(true);
    upstream = socket;
    if (head.length) ws.send(head, { binary: true });
    for (const b of pending.splice(0)) socket.write(b);
    socket.on('data', (b: Buffer) => ws.send(b, { binary: true }));
    socket.on('close', () => finish(1000, ''));
    socket.on('error', () => finish(1011, 'the runtime closed the port forward'));
  });
  req.on('response', (res) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () =>
      finish(
        1011,
        `the container runtime refused the port forward: ${Buffer.concat(chunks).toString().trim()}`,
      ),
    );
  });
  req.on('error', (e) => finish(1011, `error dialing the container runtime: ${e.message}`));
  req.end();
}
