import type { Duplex } from 'node:stream';
import {
  ControlType,
  dataFrame,
  FLAG_FIN,
  goAway,
  headerBlockOffset,
  ping,
  type RawFrame,
  readFrames,
  rstStream,
  type SpdyHeaders,
  synStream,
} from './frames.ts';
import { HeaderCodec } from './zlib.ts';

const MAX_DATA = 0xffffff;
const REFUSED_STREAM = 3;

/** One client-initiated stream: data in both directions, `end()` half-closes ours with FIN. */
export class SpdyStream {
  onData: (data: Buffer) => void = () => {};
  /** The peer finished its side (FIN or RST_STREAM), or the connection ended. */
  onEnd: () => void = () => {};
  private ended = false;
  private closed = false;

  constructor(
    readonly id: number,
    private readonly session: SpdySession,
  ) {}

  write(data: Buffer): void {
    if (this.closed) return;
    for (let at = 0; at < data.length; at += MAX_DATA) {
      this.session.send(dataFrame(this.id, data.subarray(at, at + MAX_DATA)));
    }
  }

  /** Half-closes our side: an empty DATA frame with FIN, what makes the peer read EOF. */
  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.session.send(dataFrame(this.id, Buffer.alloc(0), true));
  }

  /** @internal */
  remoteEnded(): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd();
  }
}

/**
 * The client side of a SPDY/3 connection over an upgraded socket (what client-go's spdystream
 * speaks): streams are opened with SYN_STREAM, server pings answered. No flow control: spdystream
 * neither sends nor honours WINDOW_UPDATE.
 */
export class SpdySession {
  /** The connection is gone (socket closed or errored); every stream has ended. */
  onClose: (err?: Error) => void = () => {};
  private readonly codec = new HeaderCodec();
  private readonly streams = new Map<number, SpdyStream>();
  private nextId = 1;
  private buffered: Buffer = Buffer.alloc(0);
  private out: Promise<unknown> = Promise.resolve();
  private incoming: Promise<unknown> = Promise.resolve();
  private done = false;
  private closing = false;

  constructor(private readonly socket: Duplex) {
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    // Frames already read are handled before the streams learn that the connection ended.
    let error: Error | undefined;
    socket.on('error', (err) => {
      error ??= err;
    });
    socket.on('close', () => {
      this.closing = true;
      this.incoming = this.incoming.then(() => this.finish(error));
    });
  }

  /** Feeds bytes that arrived with the 101 answer, before the socket was handed over. */
  receive(chunk: Buffer): void {
    if (this.closing || chunk.length === 0) return;
    let frames: RawFrame[];
    try {
      ({ frames, rest: this.buffered } = readFrames(Buffer.concat([this.buffered, chunk])));
    } catch (e) {
      this.socket.destroy(e as Error);
      return;
    }
    for (const f of frames) {
      this.incoming = this.incoming.then(() => this.handle(f)).catch((e) => this.socket.destroy(e as Error));
    }
  }

  /** Opens a stream with these headers. */
  open(headers: SpdyHeaders): SpdyStream {
    const stream = new SpdyStream(this.nextId, this);
    this.nextId += 2;
    this.streams.set(stream.id, stream);
    const block = this.codec.encode(headers);
    block.catch(() => {}); // awaited in turn below; a failure destroys the socket there
    this.enqueue(async () => synStream(stream.id, await block));
    return stream;
  }

  /** @internal Writes a frame after everything queued before it. */
  send(frame: Buffer): void {
    this.enqueue(() => frame);
  }

  /** Sends GOAWAY and closes the socket once queued frames are written. */
  close(): void {
    if (this.closing) return;
    this.send(goAway(0));
    this.out = this.out.then(() => this.socket.end());
  }

  /** Drops the connection at once. */
  destroy(): void {
    this.socket.destroy();
  }

  /** Stops reading from the peer (back-pressure); frames already read are still delivered. */
  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  private enqueue(frame: () => Buffer | Promise<Buffer>): void {
    this.out = this.out
      .then(frame)
      .then((buf) => {
        if (!this.closing) this.socket.write(buf);
      })
      .catch((err) => this.socket.destroy(err as Error));
  }

  private async handle(f: RawFrame): Promise<void> {
    if (f.kind === 'data') {
      const stream = this.streams.get(f.streamId);
      if (!stream) return;
      if (f.data.length) stream.onData(f.data);
      if (f.flags & FLAG_FIN) stream.remoteEnded();
      return;
    }
    const offset = headerBlockOffset(f.type);
    // Every header block continues the connection's zlib stream, even one Outpost ignores.
    if (offset >= 0) await this.codec.decode(f.payload.subarray(offset));
    const id = f.payload.length >= 4 ? f.payload.readUInt32BE(0) & 0x7fffffff : 0;
    switch (f.type) {
      case ControlType.SYN_STREAM:
        this.send(rstStream(id, REFUSED_STREAM)); // server push is not used by the CRI streaming server
        break;
      case ControlType.SYN_REPLY:
      case ControlType.HEADERS:
        if (f.flags & FLAG_FIN) this.streams.get(id)?.remoteEnded();
        break;
      case ControlType.RST_STREAM:
        this.streams.get(id)?.remoteEnded();
        break;
      case ControlType.PING:
        if (id % 2 === 0) this.send(ping(id)); // even ids are the server's; odd ones answer ours
        break;
      default: // SETTINGS, GOAWAY, WINDOW_UPDATE: nothing to do for a short-lived exec connection
    }
  }

  private finish(err?: Error): void {
    if (this.done) return;
    this.done = true;
    this.codec.close();
    for (const s of this.streams.values()) s.remoteEnded();
    this.onClose(err);
  }
}
