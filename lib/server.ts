import { chmodSync, rmSync } from 'node:fs';
import type { IncomingMessage, Server } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Server as NetServer } from 'node:net';
import type { Duplex } from 'node:stream';
import type { SecureContext } from 'node:tls';
import { createAdaptorServer, type ServerType } from '@hono/node-server';
import type { Env, Hono } from 'hono';
import type { TlsFiles } from '#lib/auth/load.ts';
import { localSockets } from '#lib/auth/local.ts';
import type { Fetch, UpgradeHandling } from '#lib/exec/ws-node.ts';

export interface RunningServer {
  url: string;
  /** The HTTPS URL of a server that answers both on one port (`listen`'s `sniff`). */
  secureUrl?: string | undefined;
  server: ServerType;
  /** Swaps the TLS certificate for new connections (a renewed serving certificate). */
  setTls(tls: TlsFiles): void;
  /** Stops accepting, lets in-flight requests finish, closes connections as they go idle. */
  close(): Promise<void>;
}

/** The first byte of a TLS connection: a handshake record (RFC 8446 5.1, ContentType 22). */
const TLS_HANDSHAKE = 0x16;

/**
 * Serves the app on host:port (port 0 picks a free one) and resolves once listening: plain HTTP,
 * HTTPS with `tls`, or both on the same port with `sniff` (each connection's first byte says
 * which, as a TLS handshake starts with 0x16 and an HTTP request with a letter). With `sniff`,
 * `tls` may be a function, called on the first TLS connection (undefined: TLS connections close).
 */
export async function listen<E extends Env>(
  app: Hono<E>,
  host: string,
  port: number,
  tls?: TlsFiles | (() => TlsFiles | undefined),
  opts: { sniff?: boolean } = {},
): Promise<RunningServer> {
  if (typeof tls === 'function' && !opts.sniff)
    throw new Error('listen: TLS files from a function need sniff');
  // node:https and node:tls load when needed: HTTPS only is known now, the sniffer's first TLS
  // connection comes later (plain HTTP and cached reads never wait for them).
  const https = tls && !opts.sniff ? await import('node:https') : undefined;
  return new Promise((resolve, reject) => {
    // Client certificates are asked for but not required: a caller may use a bearer token instead,
    // and an unverified certificate simply authenticates no one (lib/auth/authenticate.ts). Without
    // --client-ca no certificate is asked for, and an empty CA list keeps Node from loading its ~140
    // public root certificates into the context, which only verifying a peer would use (about 1 MB
    // of RSS from the first TLS connection on; docs/performance.md).
    const serverOptions = (t: TlsFiles) => ({
      cert: t.cert,
      key: t.key,
      ...(t.ca ? { ca: t.ca, requestCert: true, rejectUnauthorized: false } : { ca: [] }),
    });
    const fetch = app.fetch as Fetch;
    let draining = false;
    const servers: Server[] = [];
    const upgrades: UpgradeHandling[] = [];
    const adopt = (http: Server) => {
      // Slow or stalled clients cannot hold sockets forever; long answers (watch, logs -f, exec)
      // are not limited, only the time to send the request itself.
      http.headersTimeout = 10_000;
      http.requestTimeout = 60_000;
      http.keepAliveTimeout = 5_000;
      http.maxHeadersCount = 100;
      // While shutting down, answers say `Connection: close`, so no client sends another request
      // on a connection that is about to close.
      http.on('request', (_req, res) => {
        if (draining) res.shouldKeepAlive = false;
      });
      // Upgrade requests (exec's WebSocket and SPDY) go through the app too.
      upgrades.push(handleUpgrades(http, fetch));
      servers.push(http);
      return http;
    };
    // Both on one port: one HTTP server, TLS connections decrypted in front of it (the same code
    // path on Node, Deno and Bun; Bun's https.Server takes no handed-over socket).
    const sniff = !!tls && !!opts.sniff;
    const secure =
      tls &&
      typeof tls !== 'function' &&
      https &&
      (createAdaptorServer({
        fetch: app.fetch,
        createServer: https.createServer,
        serverOptions: serverOptions(tls),
      }) as Server);
    const plain = (!tls || sniff) && (createAdaptorServer({ fetch: app.fetch }) as Server);
    if (secure) adopt(secure);
    if (plain) adopt(plain);
    // The sniffer's certificate, made into a secure context on the first TLS connection after it.
    let contextFiles = sniff ? tls : undefined;
    let context: SecureContext | undefined;
    const secureSocket = async (socket: Duplex, handOver: () => void) => {
      const { createSecureContext, TLSSocket } = await import('node:tls');
      if (!context) {
        const files = typeof contextFiles === 'function' ? contextFiles() : contextFiles;
        if (!files) throw new Error('no certificate to serve TLS with');
        context = createSecureContext(serverOptions(files));
      }
      handOver();
      return new TLSSocket(socket, { isServer: true, secureContext: context });
    };
    // One listener: the server itself when it speaks one protocol, a byte sniffer in front of it.
    const listener: NetServer =
      contextFiles && plain
        ? createNetServer((socket) => {
            // Nothing sent within the header timeout: gone, as an idle HTTP connection would be.
            socket.setTimeout(10_000, () => socket.destroy());
            socket.on('error', () => socket.destroy());
            // Every chunk read before the hand-over is kept and given back in order: Deno's
            // node:net may still emit a chunk after pause(), which one 'data' listener would drop
            // (about 1 TLS handshake in 30 was reset while a watch streamed on the same port).
            const early: Buffer[] = [];
            const handOver = () => {
              socket.off('data', keep);
              socket.pause();
              for (let i = early.length - 1; i >= 0; i--) socket.unshift(early[i]!); // read again by the TLS layer or the HTTP parser
            };
            const keep = (chunk: Buffer) => {
              early.push(chunk);
              if (early.length > 1) return;
              socket.setTimeout(0);
              if (chunk[0] === TLS_HANDSHAKE) {
                secureSocket(socket, handOver).then(
                  (secured) => {
                    secured.on('error', () => secured.destroy());
                    if (socket.destroyed) secured.destroy();
                    else plain.emit('connection', secured);
                  },
                  () => socket.destroy(),
                );
              } else {
                handOver();
                plain.emit('connection', socket);
                socket.resume(); // paused above; the HTTP parser reads by 'data'
              }
            };
            socket.on('data', keep);
          })
        : ((secure || plain) as Server);
    listener.once('error', reject);
    listener.listen(port, host, () => {
      const info = listener.address() as AddressInfo;
      // The inner servers never listen themselves: 'listening' starts their connection tracking
      // (idle closing) and the header and request timeouts.
      if (sniff) for (const s of servers) s.emit('listening');
      const h = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      resolve({
        url: `${plain ? 'http' : 'https'}://${h}:${info.port}`,
        secureUrl: sniff ? `https://${h}:${info.port}` : undefined,
        server: (secure || plain) as ServerType,
        setTls: (next) => {
          if (sniff) {
            contextFiles = next;
            context = undefined;
          } else
            (secure as unknown as { setSecureContext(o: object): void } | undefined)?.setSecureContext(
              serverOptions(next),
            );
        },
        close: () =>
          new Promise<void>((done) => {
            draining = true;
            for (const u of upgrades) u.closeAll('the server is shutting down');
            // Keep-alive connections go idle as their last answer ends: close them as they do,
            // instead of waiting out the keep-alive timeout.
            const sweep = setInterval(() => {
              for (const s of servers) s.closeIdleConnections();
            }, 50);
            listener.close(() => {
              clearInterval(sweep);
              // The inner servers stop their timers (they never listened: the callback's error is expected).
              for (const s of servers) if (s !== listener) s.close(() => {});
              done();
            });
          }),
      });
    });
  });
}

/**
 * Upgrade requests (exec's and port-forward's WebSocket and SPDY) go through the app too; their
 * machinery (ws, the SPDY relays) is imported on the first one, not at start.
 */
function handleUpgrades(server: Server, fetch: Fetch): UpgradeHandling {
  let loaded: UpgradeHandling | undefined;
  let loading: Promise<UpgradeHandling> | undefined;
  const waiting = new Set<Duplex>();
  const first = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    waiting.add(socket);
    socket.on('error', () => socket.destroy());
    socket.once('close', () => waiting.delete(socket));
    loading ??= import('#lib/exec/ws-node.ts').then((m) => {
      server.off('upgrade', first);
      loaded = m.handleUpgrades(server, fetch);
      return loaded;
    });
    loading.then(
      () => {
        waiting.delete(socket);
        // Handed to the real handler, now the server's only upgrade listener.
        if (!socket.destroyed) server.emit('upgrade', req, socket, head);
      },
      () => socket.destroy(),
    );
  };
  server.on('upgrade', first);
  return {
    closeAll(reason) {
      for (const socket of waiting) socket.destroy();
      waiting.clear();
      loaded?.closeAll(reason);
    },
  };
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
    const upgrades = handleUpgrades(server, app.fetch as Fetch);
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
