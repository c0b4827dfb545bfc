import { type IncomingMessage, request } from 'node:http';
import type { Duplex } from 'node:stream';
import { StatusError, unavailable } from '#lib/kube/status.ts';
import { endWith, endWithStatus, httpHead } from './raw-http.ts';

// Rebuilt for the runtime's own connection, or none of its business.
const DROP = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'authorization',
  'cookie',
]);

/**
 * Passes a client's SPDY upgrade (kubectl ≤ 1.29, `keadm ctl exec -t`, port forwarding; or port
 * forwarding's WebSocket) through to the runtime's
 * streaming URL, then copies bytes both ways, as the API server's upgrade-aware proxy does: the
 * runtime negotiates the stream protocol (`X-Stream-Protocol-Version`) with the client itself, and
 * a refusal reaches the client as the runtime sent it. Calls `done` once, when the session is over.
 */
export function proxySpdy(
  req: IncomingMessage,
  client: Duplex,
  head: Buffer,
  url: string,
  done: () => void,
): void {
  const headers: string[] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    if (!DROP.has(req.rawHeaders[i]!.toLowerCase())) headers.push(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  }
  const upstream = request(url, {
    // SPDY upgrades are POSTs; a WebSocket handshake (port forwarding's) is a GET.
    method: req.method === 'GET' ? 'GET' : 'POST',
    agent: false,
    headers: ['Host', new URL(url).host, ...headers, 'Content-Length', '0'],
  });
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    done();
  };
  client.on('close', () => {
    upstream.destroy();
    finish();
  });
  upstream.on('upgrade', (res, socket, upHead) => {
    socket.setTimeout(0);
    socket.setNoDelay(true);
    client.write(httpHead(101, res.statusMessage, res.rawHeaders));
    if (upHead.length) client.write(upHead);
    if (head.length) socket.write(head);
    socket.pipe(client);
    client.pipe(socket);
    socket.on('error', () => client.destroy());
    socket.on('close', () => client.destroy());
    client.on('close', () => socket.destroy());
  });
  upstream.on('response', (res) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => {
      const body = Buffer.concat(chunks);
      const code = res.statusCode ?? 502;
      if (/json/.test(res.headers['content-type'] ?? '')) {
        endWith(client, code, res.rawHeaders, body, res.statusMessage);
        return;
      }
      // kubectl prints only a Status's message: wrap the runtime's plain-text refusal in one.
      const text = body.toString('utf8').trim() || res.statusMessage || '';
      endWithStatus(
        client,
        new StatusError(
          code,
          code >= 500 ? 'InternalError' : 'BadRequest',
          `the container runtime refused the stream: ${text}`,
        ),
      );
    });
  });
  upstream.on('error', (e) =>
    endWithStatus(
      client,
      unavailable(`error dialing the container runtime's streaming server: ${e.message}`),
    ),
  );
  upstream.end();
}
