// PodExecOptions as kubectl and keadm send them (query parameters), checked with the API server's
// and kubelet's messages, and the upgrade headers that pick the streaming protocol.
import * as z from 'zod';
import { badRequest } from '#lib/kube/status.ts';

/** The channel protocols Outpost speaks to clients, best first (kubectl 1.30+ offers only v5). */
export const CHANNEL_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'] as const;
export type ChannelProtocol = (typeof CHANNEL_PROTOCOLS)[number];

// strconv.ParseBool, what the API server decodes query booleans with.
const TRUE = ['1', 't', 'T', 'TRUE', 'true', 'True'];
const FALSE = ['0', 'f', 'F', 'FALSE', 'false', 'False'];
const bool = z
  .string()
  .refine((v) => TRUE.includes(v) || FALSE.includes(v), { message: 'must be true or false' })
  .transform((v) => TRUE.includes(v));
const repeated = z.union([z.string(), z.array(z.string())]).transform((v) => (Array.isArray(v) ? v : [v]));

/** The query of `.../pods/{name}/exec`. */
export const execQuery = z.object({
  command: repeated.optional(),
  container: z.string().optional(),
  stdin: bool.optional(),
  stdout: bool.optional(),
  stderr: bool.optional(),
  tty: bool.optional(),
});

/** What one exec asks for, after the checks. */
export interface ExecOptions {
  command: string[];
  container: string | undefined;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/**
 * Checks a decoded exec query: a command is required. With a TTY stderr is merged into stdout
 * (CRI refuses both), as kubectl itself asks.
 */
export function execOptions(q: z.output<typeof execQuery>): ExecOptions {
  const command = q.command ?? [];
  if (command.length === 0) throw badRequest('you must specify at least one command for the container');
  const tty = q.tty ?? false;
  const opts = {
    command,
    container: q.container || undefined,
    stdin: q.stdin ?? false,
    stdout: q.stdout ?? false,
    stderr: (q.stderr ?? false) && !tty,
    tty,
  };
  return opts;
}

const header = (headers: Headers, name: string) => (headers.get(name) ?? '').toLowerCase();
const hasUpgrade = (headers: Headers) =>
  header(headers, 'connection')
    .split(',')
    .some((t) => t.trim() === 'upgrade');

/** A WebSocket handshake (`Connection: Upgrade`, `Upgrade: websocket`). */
export const isWebSocketUpgrade = (headers: Headers): boolean =>
  hasUpgrade(headers) && header(headers, 'upgrade') === 'websocket';

/** A SPDY upgrade as kubectl ≤ 1.29 and keadm send it (`Upgrade: SPDY/3.1`). */
export const isSpdyUpgrade = (headers: Headers): boolean =>
  hasUpgrade(headers) && header(headers, 'upgrade').startsWith('spdy/');

/** The subprotocols a WebSocket client offers (`Sec-WebSocket-Protocol`, comma-separated). */
export const offeredProtocols = (headers: Headers): string[] =>
  (headers.get('sec-websocket-protocol') ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);

/** The best channel protocol both sides speak, or undefined. */
export const chooseProtocol = (offered: string[]): ChannelProtocol | undefined =>
  CHANNEL_PROTOCOLS.find((p) => offered.includes(p));
