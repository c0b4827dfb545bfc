import type { AppContext } from '#lib/http/env.ts';
import { badRequest } from '#lib/kube/status.ts';
import { type RunningContainer, requireRuntime } from '#lib/pods/runtime/find-container.ts';
import {
  CHANNEL_PROTOCOLS,
  chooseProtocol,
  type ExecOptions,
  isWebSocketUpgrade,
  offeredProtocols,
} from './options.ts';
import { prepareAttach, prepareExec } from './run.ts';
import { type ExecSession, upgraderOf } from './upgrade.ts';

/** The streams a session asks for. */
type Streams = Pick<ExecOptions, 'stdin' | 'stdout' | 'stderr' | 'tty'>;

/**
 * Checks an exec upgrade request, prepares the runtime session and hands it to the server's
 * upgrader. Throws the Status the client gets instead: 400 for a request that is not a WebSocket
 * handshake or offers no channel protocol Outpost speaks (kubectl ≥ 1.30 then retries over SPDY).
 */
export function prepareExecUpgrade(
  c: AppContext,
  target: RunningContainer,
  opts: ExecOptions,
  kind: 'websocket' | 'spdy',
): Promise<void> {
  return prepareStreamUpgrade(c, opts, kind, (passThrough) =>
    prepareExec(requireRuntime(c.var.cri), target, opts, passThrough),
  );
}

/** The same for an attach to a running container's own stdio (CRI Attach). */
export function prepareAttachUpgrade(
  c: AppContext,
  target: RunningContainer,
  opts: Streams,
  kind: 'websocket' | 'spdy',
): Promise<void> {
  return prepareStreamUpgrade(c, opts, kind, (passThrough) =>
    prepareAttach(requireRuntime(c.var.cri), target, opts, passThrough),
  );
}

async function prepareStreamUpgrade(
  c: AppContext,
  opts: Streams,
  kind: 'websocket' | 'spdy',
  prepare: (passThrough: boolean) => Promise<ExecSession>,
): Promise<void> {
  const headers = c.req.raw.headers;
  const upgrade = upgraderOf(c);
  // kubelet's check (remotecommand NewOptions); keadm's plain POST captures both outputs instead.
  if (!opts.stdin && !opts.stdout && !opts.stderr) {
    throw badRequest('you must specify at least 1 of stdin, stdout, stderr');
  }
  if (kind === 'spdy') {
    if (!upgrade)
      throw badRequest('SPDY/3.1 streams are not served by this server: use kubectl 1.30 or newer');
    const leave = c.var.limits.exec.enter();
    const session = await prepare(true).catch((e) => {
      leave();
      throw e;
    });
    upgrade({ kind, session: { ...session, onEnd: leave } });
    return;
  }
  // The API server's upgrade-aware proxy answers a plain request this way.
  if (!isWebSocketUpgrade(headers) || !upgrade) throw badRequest('Upgrade request required');
  const offered = offeredProtocols(headers);
  const protocol = chooseProtocol(offered);
  if (!protocol) {
    throw badRequest(
      `none of the offered WebSocket subprotocols [${offered.join(' ')}] is supported: use one of [${CHANNEL_PROTOCOLS.join(' ')}]`,
    );
  }
  const leave = c.var.limits.exec.enter();
  const session = await prepare(false).catch((e) => {
    leave();
    throw e;
  });
  upgrade({ kind, protocol, session: { ...session, onEnd: leave } });
}
