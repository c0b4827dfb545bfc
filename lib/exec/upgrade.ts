// The contract between route handlers (runtime-portable) and the server adapter that owns the
// sockets (ws-node.ts): a handler checks an upgrade request like any other request, then hands the
// adapter a plan; the adapter switches protocols and runs it. Without an adapter (app.request in
// tests, another runtime) there is no upgrader and the handler answers a Status instead.
import type { AppContext } from '#lib/http/env.ts';
import type { ChannelProtocol } from './options.ts';

/** The key under which the adapter puts its upgrader into the request's env (Hono `c.env`). */
export const UPGRADER = Symbol.for('outpost.upgrader');

/** A runtime exec session: the CRI streaming URL and the streams it was prepared with. */
export interface ExecSession {
  /** The runtime's single-use streaming URL (CRI `Exec`). */
  url: string;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
  /** For logs: `ns/pod/container`. */
  target: string;
  /** Called once when the session ends (gives back its slot of --max-exec-sessions). */
  onEnd?: () => void;
}

export type UpgradePlan =
  /** Accept the WebSocket with this subprotocol and relay its channels to the runtime. */
  | { kind: 'websocket'; protocol: ChannelProtocol; session: ExecSession }
  /** Pass a SPDY upgrade through to the runtime's streaming server, byte for byte. */
  | { kind: 'spdy'; session: ExecSession }
  /** Pass any upgrade (port forwarding's SPDY or WebSocket) through to this runtime URL. */
  | { kind: 'passthrough'; session: Pick<ExecSession, 'url' | 'target' | 'onEnd'> }
  /** Accept kubectl's SPDY-over-WebSocket port forwarding and tunnel it to this runtime URL. */
  | { kind: 'tunnel'; protocol: string; session: Pick<ExecSession, 'url' | 'target' | 'onEnd'> };

export type Upgrader = (plan: UpgradePlan) => void;

/** The adapter's upgrader for this request, if the server runtime can switch protocols. */
export function upgraderOf(c: AppContext): Upgrader | undefined {
  const env = c.env as Record<symbol, unknown> | undefined;
  const up = env?.[UPGRADER];
  return typeof up === 'function' ? (up as Upgrader) : undefined;
}
