import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { handleUpgrades } from './exec/ws-node.ts';
import type { AppEnv } from './http/env.ts';

export interface RunningServer {
  url: string;
  server: ServerType;
  /** Stops accepting, lets in-flight requests finish, closes connections as they go idle. */
  close(): Promise<void>;
}

/** Serves the app on host:port (port 0 picks a free one) and resolves once listening. */
export function listen(app: Hono<AppEnv>, host: string, port: number): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname: host, port }, (info: AddressInfo) => {
      const h = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      resolve({
        url: `http://${h}:${info.port}`,
        server,
        close: () =>
          new Promise<void>((done) => {
            draining = true;
            upgrades.closeAll('the server is shutting down');
            // Keep-alive connections go idle as their last answer ends: close them as they do,
            // instead of waiting out the keep-alive timeout.
            const sweep = setInterval(() => http.closeIdleConnections(), 50);
            server.close(() => {
              clearInterval(sweep);
              done();
            });
          }),
      });
    });
    const http = server as Server;
    // While shutting down, answers say `Connection: close`, so no client sends another request
    // on a connection that is about to close.
    let draining = false;
    http.on('request', (_req, res) => {
      if (draining) res.shouldKeepAlive = false;
    });
    // Upgrade requests (exec's WebSocket and SPDY) go through the app too.
    const upgrades = handleUpgrades(http, app.fetch);
    server.once('error', reject);
  });
}
