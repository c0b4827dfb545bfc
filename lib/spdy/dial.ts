import { request } from 'node:http';
import { SpdySession } from './session.ts';

/** The runtime refused the upgrade: its HTTP status and body. */
export class SpdyDialError extends Error {
  override name = 'SpdyDialError';
  constructor(
    message: string,
    readonly statusCode?: number,
  ) {
    super(message);
  }
}

/**
 * Upgrades an HTTP connection to SPDY/3.1 the way client-go does (`POST`, `Upgrade: SPDY/3.1`,
 * one `X-Stream-Protocol-Version` per protocol offered); resolves with the session and the
 * protocol the server chose.
 */
export function dialSpdy(
  url: string,
  protocols: string[],
  timeoutMs = 10_000,
): Promise<{ session: SpdySession; protocol: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'SPDY/3.1',
        'X-Stream-Protocol-Version': protocols,
        'Content-Length': '0',
      },
      timeout: timeoutMs,
    });
    req.on('upgrade', (res, socket, head) => {
      socket.setTimeout(0);
      socket.setNoDelay(true);
      const session = new SpdySession(socket);
      session.receive(head);
      const chosen = res.headers['x-stream-protocol-version'];
      resolve({ session, protocol: Array.isArray(chosen) ? (chosen[0] ?? '') : (chosen ?? '') });
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      res.on('end', () =>
        reject(new SpdyDialError(body.trim() || `HTTP ${res.statusCode} without an upgrade`, res.statusCode)),
      );
    });
    req.on('timeout', () => req.destroy(new SpdyDialError(`no answer within ${timeoutMs} ms`)));
    req.on('error', (e) => reject(e instanceof SpdyDialError ? e : new SpdyDialError(e.message)));
    req.end();
  });
}
