// SPDY/3 framing (draft 3, section 2.2): the subset a CRI streaming client needs. Header blocks are
// carried here uncompressed; `HeaderCodec` (zlib.ts) compresses them with the connection's context.

export const SPDY_VERSION = 3;
export const FLAG_FIN = 0x01;
export const FLAG_UNIDIRECTIONAL = 0x02;

/** Control frame types (section 2.6). */
export const ControlType = {
  SYN_STREAM: 1,
  SYN_REPLY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  HEADERS: 8,
  WINDOW_UPDATE: 9,
} as const;

/** Header names (lowercase) to their values; SPDY joins repeated values with NUL. */
export type SpdyHeaders = Record<string, string[]>;

/** A frame as read off the wire: header blocks still compressed. */
export type RawFrame =
  | { kind: 'data'; streamId: number; flags: number; data: Buffer }
  | { kind: 'control'; type: number; flags: number; payload: Buffer };

/** Splits complete frames off the front of `buf`; returns them and the unconsumed rest. */
export function readFrames(buf: Buffer): { frames: RawFrame[]; rest: Buffer } {
  const frames: RawFrame[] = [];
  let at = 0;
  while (buf.length - at >= 8) {
    const first = buf.readUInt32BE(at);
    const flags = buf[at + 4]!;
    const length = buf.readUIntBE(at + 5, 3);
    if (buf.length - at < 8 + length) break;
    const body = buf.subarray(at + 8, at + 8 + length);
    if (first & 0x80000000) {
      const version = (first >>> 16) & 0x7fff;
      if (version !== SPDY_VERSION) throw new Error(`unsupported SPDY version ${version}`);
      frames.push({ kind: 'control', type: first & 0xffff, flags, payload: body });
    } else {
      frames.push({ kind: 'data', streamId: first & 0x7fffffff, flags, data: body });
    }
    at += 8 + length;
  }
  return { frames, rest: buf.subarray(at) };
}

function header(first: number, flags: number, length: number): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt32BE(first >>> 0);
  h[4] = flags;
  h.writeUIntBE(length, 5, 3);
  return h;
}

/** A control frame with its payload. */
export function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  return Buffer.concat([header((0x8000 | SPDY_VERSION) * 0x10000 + type, flags, payload.length), payload]);
}

/** A data frame (payloads over 16 MiB must be split by the caller). */
export function dataFrame(streamId: number, data: Buffer, fin = false): Buffer {
  return Buffer.concat([header(streamId & 0x7fffffff, fin ? FLAG_FIN : 0, data.length), data]);
}

const u32 = (...values: number[]) => {
  const b = Buffer.alloc(4 * values.length);
  for (const [i, v] of values.entries()) b.writeUInt32BE(v >>> 0, 4 * i);
  return b;
};

/** SYN_STREAM: stream id, associated stream 0, priority 0, slot 0, then the compressed header block. */
export const synStream = (streamId: number, block: Buffer, flags = 0): Buffer =>
  controlFrame(ControlType.SYN_STREAM, flags, Buffer.concat([u32(streamId, 0), Buffer.alloc(2), block]));

/** SYN_REPLY: stream id, then the compressed header block. */
export const synReply = (streamId: number, block: Buffer, flags = 0): Buffer =>
  controlFrame(ControlType.SYN_REPLY, flags, Buffer.concat([u32(streamId), block]));

export const rstStream = (streamId: number, status: number): Buffer =>
  controlFrame(ControlType.RST_STREAM, 0, u32(streamId, status));

export const ping = (id: number): Buffer => controlFrame(ControlType.PING, 0, u32(id));

export const goAway = (lastGoodStreamId: number, status = 0): Buffer =>
  controlFrame(ControlType.GOAWAY, 0, u32(lastGoodStreamId, status));

/** Where a control frame's compressed header block starts, or -1 when it carries none. */
export function headerBlockOffset(type: number): number {
  if (type === ControlType.SYN_STREAM) return 10;
  if (type === ControlType.SYN_REPLY || type === ControlType.HEADERS) return 4;
  return -1;
}

/** Encodes a name/value block (section 2.6.10): counts and lengths are 32-bit. */
export function encodeHeaderBlock(headers: SpdyHeaders): Buffer {
  const parts: Buffer[] = [u32(Object.keys(headers).length)];
  for (const [name, values] of Object.entries(headers)) {
    const n = Buffer.from(name.toLowerCase(), 'utf8');
    const v = Buffer.from(values.join('\0'), 'utf8');
    parts.push(u32(n.length), n, u32(v.length), v);
  }
  return Buffer.concat(parts);
}

/** Decodes a name/value block; throws on a truncated one. */
export function decodeHeaderBlock(block: Buffer): SpdyHeaders {
  const headers: SpdyHeaders = {};
  let at = 0;
  const take = (n: number) => {
    if (at + n > block.length) throw new Error('truncated SPDY header block');
    const b = block.subarray(at, at + n);
    at += n;
    return b;
  };
  const count = take(4).readUInt32BE();
  for (let i = 0; i < count; i++) {
    const name = take(take(4).readUInt32BE()).toString('utf8').toLowerCase();
    const value = take(take(4).readUInt32BE()).toString('utf8');
    headers[name] = [...(headers[name] ?? []), ...value.split('\0')];
  }
  return headers;
}
