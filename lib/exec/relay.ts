import type { WebSocket } from 'ws';
import type { ChannelProtocol } from './options.ts';
import { failureStatus } from './status.ts';
import type { ExecSession } from './upgrade.ts';
import { connectUpstream, RESIZE, STATUS, STDIN } from './upstream.ts';

/** v5's close signal (`[255, channel]`): the client will send nothing more on that channel. */
const CLOSE = 255;
// Output is read from the runtime only as fast as the client takes it.
const HIGH_WATER = 1 << 20;
const LOW_WATER = 1 << 16;

export interface RelayLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * Relays a client's channel WebSocket (v5 or v4) to the runtime's exec session: stdin and resize
 * up, stdout, stderr and the status frame down, then a normal close. Returns a function that ends
 * the session from the server's side (shutdown).
 */
export function relayExec(
  client: WebSocket,
  session: ExecSession,
  protocol: ChannelProtocol,
  log?: RelayLogger,
): (reason: string) => void {
  const started = performance.now();
  const upstream = connectUpstream(session);
  let statusSent = false;
  let paused = false;

  const drained = () => {
    if (paused && client.bufferedAmount < LOW_WATER) {
      paused = false;
      upstream.resume();
    }
  };
  const send = (channel: number, data: Buffer) => {
    if (client.readyState !== client.OPEN) return;
    client.send(Buffer.concat([Buffer.of(channel), data]), drained);
    if (!paused && client.bufferedAmount > HIGH_WATER) {
      paused = true;
      upstream.pause();
    }
  };
  const end = (message?: string) => {
    // kubectl takes a session without a status frame for success: never end without one.
    if (!statusSent)
      send(STATUS, failureStatus(message ?? 'the container runtime ended the stream without an exit status'));
    statusSent = true;
    if (client.readyState === client.OPEN) client.close(1000);
  };

  upstream.onFrame = (channel, data) => {
    if (channel === STATUS) {
      if (statusSent) return;
      statusSent = true;
    } else if (data.length === 0) {
      return; // containerd opens with an empty stdout frame
    }
    send(channel, data);
  };
  upstream.onClose = (err) => {
    log?.info(
      { target: session.target, protocol, ms: Math.round(performance.now() - started), err: err?.message },
      'exec session ended',
    );
    end(err && `error relaying to the container runtime's streaming server: ${err.message}`);
  };

  // Text frames carry the same channel byte and payload as binary ones (kubelet reads both alike);
  // the Python client's write_stdin("...") sends text.
  client.on('message', (data: Buffer) => {
    if (data.length === 0) return;
    const payload = data.subarray(1);
    switch (data[0]) {
      case STDIN:
        upstream.stdin(payload);
        break;
      case RESIZE:
        upstream.resize(payload);
        break;
      case CLOSE:
        if (payload[0] === STDIN) upstream.closeStdin();
        break;
      default: // output channels are the server's; anything else is ignored as kubelet does
    }
  });
  client.on('error', (e) => log?.warn({ target: session.target, err: e.message }, 'exec client error'));
  client.on('close', () => upstream.close());

  return (reason) => {
    end(reason);
    upstream.close();
  };
}
