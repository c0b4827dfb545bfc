import { chmodSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer, type ServerType, serve } from '@hono/node-server';
import type { Env, Hono } from 'hono';
import type { TlsFiles } from '#lib/auth/load.ts';
import { localSockets } from '#lib/auth/local.ts';
import { handleUpgrades } from '#lib/exec/ws-node.ts';

export interface RunningServer {
  url: string;
  server: ServerType;
  /** Swaps the TLS certificate for new connections (a renewed serving certificate). */
  setTls(tls: TlsFiles): void;
  /** Stops accepting, lets in-flight requests finish, closes connections as they go idle. */
  close(): Promise<void>;
}

/** Serves the app on host:port (port 0 picks a free one) and resolves once listening. */
export function listen<E extends Env>(
  app: Hono<E>,
  host: string,
  port: number,
  tls?: TlsFiles,
): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    // Client certificates are asked for but not required: a caller may use a bearer token instead,
    // and an unverified certificate simply authenticates no one (lib/auth/authenticate.ts).
    const tlsOptions = tls && {
      createServer: createHttpsServer,
      serverOptions: {
        cert: tls.cert,
        key: tls.key,
        ...(tls.ca ? { ca: tls.ca, requestCert: true, rejectUnauthorized: false } : {}),
      },
    };
    const server = serve({ fetch: app.fetch, hostname: host, port, ...tlsOptions }, (info: AddressInfo) => {
      const h = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      resolve({
        url: `${tls ? 'https' : 'http'}://${h}:${info.port}`,
        server,
        setTls: (next) =>
          (server as unknown as { setSecureContext(o: object): void }).setSecureContext({
            cert: next.cert,
            key: next.key,
            ...(next.ca ? { ca: next.ca } : {}),
          }),
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
    // Slow or stalled clients cannot hold sockets forever; long answers (watch, logs -f, exec)
    // are not limited, only the time to send the request itself.
    http.headersTimeout = 10_000;
    http.requestTimeout = 60_000;
    http.keepAliveTimeout = 5_000;
    http.maxHeadersCount = 100;
    // While shutting down, answers say `Connection: close`, so no client sends another request
    // on a connection that is about to close.
    let draining = false;
    http.on('request', (_req, res) => {
      if (draining) res.shouldKeepAlive = false;
    });
    // Upgrade requests (exec's WebSocket and SPDY) go through the app too.
    const upgrades = handleUpgrades(http, app.fetch as Parameters<typeof handleUpgrades>[1]);
    server.once('error', reject);
  });
}

/**
 * Serves the app on a unix socket only root (and the agent's user) can open: its callers are local
 * admins (lib/auth/local.ts). A socket file left by an earlier run is replaced.
 */
export function listenLocal<E extends Env>(app: Hono<E>, path: string): Promise<{ close(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    rmSync(path, { force: true });
    const server = createAdaptorServer({ fetch: app.fetch }) as Server;
    server.on('connection', (socket) => localSockets.add(socket));
    const upgrades = handleUpgrades(server, app.fetch as Parameters<typeof handleUpgrades>[1]);
    const umask = process.umask(0o177);
    server.headersTimeout = 10_000;
    server.requestTimeout = 60_000;
    server.once('error', (e) => {
      process.umask(umask);
      reject(e);
    });
    // Created with no permission for anyone else before it accepts a connection.
    server.listen(path, () => {
      process.umask(umask);
      chmodSync(path, 0o600);
      resolve({
        close: () =>
          new Promise<void>((done) => {
            upgrades.closeAll('the server is shutting down');
            const sweep = setInterval(() => server.closeIdleConnections(), 50);
            server.close(() => {
              clearInterval(sweep);
              rmSync(path, { force: true });
              done();
            });
          }),
      });
    });
  });
}
