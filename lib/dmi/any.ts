// CustomizedValue (`configData`) travels as map<string, google.protobuf.Any>, each value a well-known
// wrapper. edgecore packs a JSON string as StringValue, a JSON number (Go float64) as FloatValue and
// a boolean as BoolValue; Outpost does the same so mappers see what they see from edgecore, and reads
// every scalar wrapper back. Objects and arrays, which edgecore refuses, travel as JSON in a StringValue.
import type { PbAny } from './types.ts';

const PREFIX = 'type.googleapis.com/google.protobuf.';

function varint(n: bigint): number[] {
  let v = BigInt.asUintN(64, n);
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}

function wrap(type: string, bytes: number[] | Buffer): PbAny {
  return { type_url: PREFIX + type, value: Buffer.from(bytes) };
}

/** Packs a JSON value the way edgecore packs configData values; `undefined` and `null` are left out. */
export function toAny(value: unknown): PbAny | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'boolean') return wrap('BoolValue', value ? [0x08, 1] : []);
  if (typeof value === 'number') {
    const b = Buffer.alloc(5);
    b[0] = 0x0d; // field 1, 32-bit
    b.writeFloatLE(value, 1);
    return wrap('FloatValue', value === 0 ? [] : b);
  }
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const utf8 = Buffer.from(text, 'utf8');
  if (utf8.length === 0) return wrap('StringValue', []);
  return wrap('StringValue', Buffer.concat([Buffer.from([0x0a, ...varint(BigInt(utf8.length))]), utf8]));
}

// The shortest decimal that reads back as the same float32, so 0.1 is 0.1 and not 0.10000000149.
function shortFloat32(f: number): number {
  for (let p = 1; p <= 9; p++) {
    const candidate = Number(f.toPrecision(p));
    if (Math.fround(candidate) === f) return candidate;
  }
  return f;
}

function readVarint(buf: Buffer, at: number): [bigint, number] {
  let result = 0n;
  let shift = 0n;
  let i = at;
  while (i < buf.length) {
    const byte = buf[i++]!;
    result |= BigInt(byte & 0x7f) << shift;
    if (!(byte & 0x80)) break;
    shift += 7n;
  }
  return [result, i];
}

/** Reads a wrapper back as a JSON scalar; an unknown type becomes its bytes in base64. */
export function fromAny(any: PbAny): unknown {
  const type = any.type_url.slice(any.type_url.lastIndexOf('/') + 1).replace(/^google\.protobuf\./, '');
  const buf = Buffer.from(any.value);
  // A wrapper has one field, number 1; an empty message is the default value.
  let at = 0;
  let raw: { varint?: bigint; fixed?: Buffer; bytes?: Buffer } = {};
  while (at < buf.length) {
    const [tag, next] = readVarint(buf, at);
    at = next;
    const wire = Number(tag & 7n);
    if (wire === 0) {
      const [v, n] = readVarint(buf, at);
      raw = { varint: v };
      at = n;
    } else if (wire === 5 || wire === 1) {
      const size = wire === 5 ? 4 : 8;
      raw = { fixed: buf.subarray(at, at + size) };
      at += size;
    } else if (wire === 2) {
      const [len, n] = readVarint(buf, at);
      raw = { bytes: buf.subarray(n, n + Number(len)) };
      at = n + Number(len);
    } else break;
  }
  switch (type) {
    case 'StringValue':
      return raw.bytes?.toString('utf8') ?? '';
    case 'BytesValue':
      return raw.bytes?.toString('base64') ?? '';
    case 'BoolValue':
      return (raw.varint ?? 0n) !== 0n;
    case 'FloatValue':
      return raw.fixed ? shortFloat32(raw.fixed.readFloatLE(0)) : 0;
    case 'DoubleValue':
      return raw.fixed ? raw.fixed.readDoubleLE(0) : 0;
    case 'Int32Value':
      return Number(BigInt.asIntN(32, raw.varint ?? 0n));
    case 'Int64Value':
      return Number(BigInt.asIntN(64, raw.varint ?? 0n));
    case 'UInt32Value':
    case 'UInt64Value':
      return Number(raw.varint ?? 0n);
    default:
      return buf.toString('base64');
  }
}

/** A CustomizedValue's data from a JSON object. */
export function toCustomized(
  data: Record<string, unknown> | undefined,
): { data: Record<string, PbAny> } | null {
  if (!data) return null;
  const out: Record<string, PbAny> = {};
  for (const [k, v] of Object.entries(data)) {
    const any = toAny(v);
    if (any) out[k] = any;
  }
  return { data: out };
}

/** A JSON object from a CustomizedValue. */
export function fromCustomized(
  value: { data?: Record<string, PbAny> } | null | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value?.data ?? {})) out[k] = fromAny(v);
  return out;
}
