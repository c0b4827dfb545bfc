// Node's side of protocol upgrades. Node hands requests carrying `Connection: Upgrade` to the
// server's `upgrade` event with the raw socket instead of to the app; this adapter runs them
// through the app all the same (so routes check them like any request and errors are Status
// objects) and, when a route asked for an upgrade (upgrade.ts), performs it on the socket.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { internal } from '#lib/kube/status.ts';
import { endWithResponse, endWithStatus } from './raw-http.ts';
import { type RelayLogger, relayExec } from './relay.ts';
import { proxySpdy } from './spdy-proxy.ts';
import { PORT_FORWARD_TUNNEL, tunnelSpdy } from './spdy-tunnel.ts';
import { UPGRADER, type UpgradePlan } from './upgrade.ts';

export type Fetch = (req: Request, env: Record<string | symbol, unknown>) => Response | Promise<Response>;

export interface UpgradeHandling {
  /** Ends every upgraded session (a status frame for WebSockets), e.g. on shutdown. */
  closeAll(reason: string): void;
}

/** The request the app sees: method, URL and headers; an upgrade request carries no body. */
function toRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
    headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  return new Request(url, { method: req.method ?? 'GET', headers });
}

/** Serves `upgrade` requests of a Node HTTP server through `fetch` (the Hono app's). */
export function handleUpgrades(server: Server, fetch: Fetch, log?: RelayLogger): UpgradeHandling {
  const protocols = new WeakMap<IncomingMessage, string>();
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    handleProtocols: (_offered, req) => protocols.get(req) ?? false,
  });
  const sessions = new Map<Duplex, (reason: string) => void>();
  // `SPDY/3.1+portforward.k8s.io` is no RFC 7230 token ('/'), which ws refuses to parse: the tunnel's
  // request goes to ws without the header, and the answer gets it back here.
  const tunnels = new WeakSet<IncomingMessage>();
  wss.on('headers', (headers, req) => {
    if (tunnels.has(req)) headers.push(`Sec-WebSocket-Protocol: ${PORT_FORWARD_TUNNEL}`);
  });

  server.on('upgrade', async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    let plan: UpgradePlan | undefined;
    let res: Response;
    try {
      res = await fetch(toRequest(req), {
        incoming: req,
        outgoing: undefined,
        [UPGRADER]: (p: UpgradePlan) => {
          plan = p;
        },
      });
    } catch (e) {
      endWithStatus(socket, internal((e as Error).message));
      return;
    }
    if (socket.destroyed) return;
    if (!plan) {
      await endWithResponse(socket, res);
      return;
    }
    const accepted: UpgradePlan = plan;
    // However the session ends (or fails to start), its exec slot is given back (idempotent).
    socket.once('close', () => accepted.session.onEnd?.());
    if (accepted.kind === 'spdy' || accepted.kind === 'passthrough') {
      sessions.set(socket, () => socket.destroy());
      proxySpdy(req, socket, head, accepted.session.url, () => {
        sessions.delete(socket);
        accepted.session.onEnd?.();
      });
      return;
    }
    protocols.set(req, accepted.protocol);
    if (accepted.kind === 'tunnel') {
      tunnels.add(req);
      delete req.headers['sec-websocket-protocol'];
      wss.handleUpgrade(req, socket, head, (ws) => {
        sessions.set(socket, () => ws.terminate());
        tunnelSpdy(ws, accepted.session.url, () => {
          sessions.delete(socket);
          accepted.session.onEnd?.();
        });
      });
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sessions.set(socket, relayExec(ws, accepted.session, accepted.protocol, log));
      ws.on('close', () => {
        sessions.delete(socket);
        accepted.session.onEnd?.();
      });
    });
  });

  return {
    closeAll(reason) {
      for (const end of sessions.values()) end(reason);
      sessions.clear();
    },
  };
}
