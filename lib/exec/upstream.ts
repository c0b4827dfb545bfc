// The runtime side of an exec session: containerd's CRI streaming server, spoken to in channel
// terms (1 stdout, 2 stderr, 3 status) whatever the wire protocol.
import { WebSocket } from 'ws';
import { dialSpdy } from '#lib/spdy/dial.ts';
import type { SpdySession, SpdyStream } from '#lib/spdy/session.ts';
import type { ExecSession } from './upgrade.ts';

export const STDIN = 0;
export const STDOUT = 1;
export const STDERR = 2;
export const STATUS = 3;
export const RESIZE = 4;

/** The v4 channel protocol: the newest containerd 1.6's streaming server speaks. */
export const RUNTIME_PROTOCOL = 'v4.channel.k8s.io';

/** One exec session on the runtime. Output arrives through `onFrame`; `onClose` comes last, once. */
export interface Upstream {
  onFrame: (channel: number, data: Buffer) => void;
  onClose: (err?: Error) => void;
  stdin(data: Buffer): void;
  /** The client has no more input: the process must read EOF. */
  closeStdin(): void;
  /** A terminal size, `{"Width":W,"Height":H}`. */
  resize(json: Buffer): void;
  pause(): void;
  resume(): void;
  close(): void;
}

/**
 * Connects to the runtime's streaming URL. A session whose stdin must end without a TTY goes over
 * SPDY: WebSocket v4 has no way to say "stdin closed" (only v5 has, which containerd 1.6 lacks),
 * while a SPDY stream can be half-closed. Everything else is relayed over WebSocket v4.
 */
export function connectUpstream(session: ExecSession): Upstream {
  return session.stdin && !session.tty ? new SpdyUpstream(session) : new WebSocketUpstream(session);
}

abstract class BaseUpstream implements Upstream {
  onFrame: Upstream['onFrame'] = () => {};
  onClose: Upstream['onClose'] = () => {};
  private closed = false;

  protected finish(err?: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose(err);
  }

  abstract stdin(data: Buffer): void;
  abstract closeStdin(): void;
  abstract resize(json: Buffer): void;
  abstract pause(): void;
  abstract resume(): void;
  abstract close(): void;
}

class WebSocketUpstream extends BaseUpstream {
  private readonly ws: WebSocket;
  private readonly pending: Buffer[] = [];

  constructor(private readonly session: ExecSession) {
    super();
    this.ws = new WebSocket(session.url, [RUNTIME_PROTOCOL], {
      perMessageDeflate: false,
      handshakeTimeout: 10_000,
    });
    let error: Error | undefined;
    this.ws.on('open', () => {
      for (const frame of this.pending.splice(0)) this.ws.send(frame);
    });
    this.ws.on('message', (data: Buffer, isBinary) => {
      if (isBinary && data.length > 0) this.onFrame(data[0]!, data.subarray(1));
    });
    this.ws.on('error', (e) => {
      error ??= e;
    });
    this.ws.on('close', () => this.finish(error));
  }

  private send(channel: number, data: Buffer): void {
    const frame = Buffer.concat([Buffer.of(channel), data]);
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(frame);
    else if (this.ws.readyState === WebSocket.CONNECTING) this.pending.push(frame);
  }

  stdin(data: Buffer): void {
    this.send(STDIN, data);
  }

  // v4 cannot signal the end of stdin. In a terminal, ^D at the start of a line is the line
  // discipline's EOF, which is what a person would type; without one there is nothing to send.
  closeStdin(): void {
    if (this.session.tty) this.send(STDIN, Buffer.of(0x04));
  }

  resize(json: Buffer): void {
    this.send(RESIZE, json);
  }

  pause(): void {
    this.ws.pause();
  }

  resume(): void {
    this.ws.resume();
  }

  close(): void {
    if (this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
    else this.ws.close(1000);
  }
}

class SpdyUpstream extends BaseUpstream {
  private spdy: SpdySession | undefined;
  private streams: { stdin?: SpdyStream; resize?: SpdyStream } = {};
  private readonly pending: ((u: SpdyUpstream) => void)[] = [];
  private abandoned = false;

  constructor(session: ExecSession) {
    super();
    dialSpdy(session.url, [RUNTIME_PROTOCOL]).then(
      ({ session: spdy, protocol }) => {
        if (this.abandoned) return spdy.destroy();
        if (protocol !== RUNTIME_PROTOCOL) {
          spdy.destroy();
          return this.finish(
            new Error(`the runtime chose stream protocol "${protocol}", not ${RUNTIME_PROTOCOL}`),
          );
        }
        this.start(spdy, session);
      },
      (err: Error) => this.finish(err),
    );
  }

  // The streams client-go opens for v4 (remotecommand `createStreams`): error first, then the
  // ones the exec was prepared with. The server reports the exit status on `error`, after output.
  private start(spdy: SpdySession, session: ExecSession): void {
    this.spdy = spdy;
    const open = (type: string) => spdy.open({ streamtype: [type] });
    const error = open('error');
    if (session.stdin) this.streams.stdin = open('stdin');
    if (session.stdout) open('stdout').onData = (d) => this.onFrame(STDOUT, d);
    if (session.stderr) open('stderr').onData = (d) => this.onFrame(STDERR, d);
    if (session.tty) this.streams.resize = open('resize');
    const status: Buffer[] = [];
    let reported = false;
    const report = () => {
      if (reported) return;
      reported = true;
      if (status.length) this.onFrame(STATUS, Buffer.concat(status));
    };
    error.onData = (d) => status.push(d);
    error.onEnd = () => {
      report();
      spdy.close();
    };
    spdy.onClose = (err) => {
      report();
      this.finish(err);
    };
    for (const op of this.pending.splice(0)) op(this);
  }

  private whenReady(op: (u: SpdyUpstream) => void): void {
    if (this.spdy) op(this);
    else this.pending.push(op);
  }

  stdin(data: Buffer): void {
    this.whenReady((u) => u.streams.stdin?.write(data));
  }

  closeStdin(): void {
    this.whenReady((u) => u.streams.stdin?.end());
  }

  resize(json: Buffer): void {
    this.whenReady((u) => u.streams.resize?.write(json));
  }

  pause(): void {
    this.spdy?.pause();
  }

  resume(): void {
    this.spdy?.resume();
  }

  close(): void {
    this.abandoned = true;
    if (this.spdy) this.spdy.destroy();
    else this.finish();
  }
}
