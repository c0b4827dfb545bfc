// Protocol Buffers messages as gRPC sends them, driven by a table of each message's fields
// (lib/<package>/codec.gen.ts, written by scripts/gen-proto.ts from proto/<package>/*.proto). One
// encoder and one decoder serve every message type: a table is a few bytes of source a field,
// where code generated per type (protobufjs's, which Outpost used before) was about 2 KiB of source
// a message that V8 keeps resident for the process's life (docs/performance.md).
//
// Messages are plain objects as @grpc/proto-loader gives them with `longs: String, enums: String,
// defaults: true, oneofs: true` (what lib/cri/types.ts and lib/dmi/types.ts are written for):
// camelCase fields; 64-bit integers as decimal strings; enums as names (a number the enum does not
// name stays a number); every field present when decoded (unset messages null, lists [], maps {},
// bytes an empty Buffer). Encoding takes what protobufjs's `fromObject` takes: numbers or strings
// for 64-bit integers, names or numbers for enums, Buffers, arrays or base64 for bytes; proto3 leaves
// a field at its default off the wire. test/cri/proto-gen.test.ts and test/grpc/codec.test.ts check
// both ways against @grpc/proto-loader: every method of both packages, and every scalar type.

/** A scalar type of a field, as .proto files name it. */
export type Scalar =
  | 'string'
  | 'bytes'
  | 'bool'
  | 'int32'
  | 'uint32'
  | 'sint32'
  | 'fixed32'
  | 'sfixed32'
  | 'int64'
  | 'uint64'
  | 'sint64'
  | 'fixed64'
  | 'sfixed64'
  | 'double'
  | 'float';

/**
 * One field: its number, its (camelCase) name, its type (a scalar or the full name of a message or
 * enum of the package), and `'repeated'` for a list (numeric lists packed, as proto3 has them) or
 * `'map'` for a map with string keys.
 */
export type FieldSpec =
  | readonly [id: number, name: string, type: string]
  | readonly [id: number, name: string, type: string, label: 'repeated' | 'map'];

/** A proto package as scripts/gen-proto.ts writes it. */
export interface PackageSpec {
  /** Enums by full name: value names to numbers, in declaration order. */
  enums: Record<string, Record<string, number>>;
  /** Message types by full name: their fields. */
  types: Record<string, readonly FieldSpec[]>;
  /** Services by full name, then method: request type, response type, request and response streaming. */
  services: Record<string, Record<string, readonly [string, string, boolean, boolean]>>;
}

/** A message type: a plain object to its wire form and back. */
export interface MessageType {
  readonly name: string;
  encode(value: object): Buffer;
  decode(bytes: Uint8Array): Record<string, unknown>;
}

/** One RPC of a package. */
export interface GeneratedMethod {
  request: MessageType;
  response: MessageType;
  requestStream: boolean;
  responseStream: boolean;
}

/** A proto package's services by full name (`runtime.v1.RuntimeService`), then method name. */
export type GeneratedProto = Record<string, Record<string, GeneratedMethod>>;

// Wire types (protobuf encoding): what follows a field's tag.
const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;

const WIRE: Record<Scalar, number> = {
  string: LEN,
  bytes: LEN,
  bool: VARINT,
  int32: VARINT,
  uint32: VARINT,
  sint32: VARINT,
  int64: VARINT,
  uint64: VARINT,
  sint64: VARINT,
  fixed32: I32,
  sfixed32: I32,
  fixed64: I64,
  sfixed64: I64,
  double: I64,
  float: I32,
};
const LONG = new Set<string>(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

/** Whether `type` is a scalar type the codec encodes and decodes (scripts/gen-proto.ts refuses others). */
export const isScalar = (type: string): type is Scalar => Object.hasOwn(WIRE, type);

/** A field resolved against its package. */
interface Field {
  id: number;
  name: string;
  /** The scalar type, or undefined for a message or an enum. */
  scalar: Scalar | undefined;
  message: Message | undefined;
  /** An enum's names to numbers, and numbers to names. */
  enumValues: Record<string, number> | undefined;
  enumNames: Map<number, string> | undefined;
  repeated: boolean;
  map: boolean;
  /** A list of numbers, enums or booleans: one length-delimited run of values. */
  packed: boolean;
  /** The wire type of one value (a list's element, a map's value). */
  wire: number;
  /** The tag in front of one value, a packed run or a map entry. */
  tag: number;
  /** One value's default when absent: zero, '', '0', false, null, an enum's first name. */
  fallback: unknown;
  /** `.package.Type.field`, for errors as protobufjs words them. */
  path: string;
}

interface Message {
  fields: Field[];
  byId: Map<number, Field>;
}

/** The message types and services of a package, from its table (built once, on the first call). */
export function protoPackage(spec: PackageSpec): GeneratedProto {
  const messages = new Map<string, Message>();
  for (const name of Object.keys(spec.types)) messages.set(name, { fields: [], byId: new Map() });
  for (const [name, specs] of Object.entries(spec.types)) {
    const m = messages.get(name)!;
    for (const [id, fieldName, type, label] of specs as readonly (readonly [
      number,
      string,
      string,
      string?,
    ])[]) {
      const scalar = isScalar(type) ? type : undefined;
      const message = messages.get(type);
      const enumValues = spec.enums[type];
      if (!scalar && !message && !enumValues)
        throw new Error(`${name}.${fieldName}: no type ${type} in the package`);
      const wire = scalar ? WIRE[scalar] : message ? LEN : VARINT;
      const packed = label === 'repeated' && wire !== LEN;
      const field: Field = {
        id,
        name: fieldName,
        scalar,
        message,
        enumValues,
        enumNames: enumValues && namesOf(enumValues),
        repeated: label === 'repeated',
        map: label === 'map',
        packed,
        wire,
        tag: id * 8 + (label === 'map' || packed ? LEN : wire),
        fallback: null,
        path: `.${name}.${fieldName}`,
      };
      field.fallback = fallback(field);
      m.fields.push(field);
      m.byId.set(id, field);
    }
    m.fields.sort((a, b) => a.id - b.id);
  }
  const typeOf = (name: string): MessageType => {
    const m = messages.get(name);
    if (!m) throw new Error(`no message type ${name} in the package`);
    return {
      name,
      encode: (value) => {
        const w = Writer.start();
        writeMessage(w, m, value, `.${name}`);
        return w.finish();
      },
      decode: (bytes) => {
        const r = new Reader(bytes);
        return readMessage(r, m, r.end);
      },
    };
  };
  const out: GeneratedProto = {};
  for (const [service, methods] of Object.entries(spec.services)) {
    const rpcs: Record<string, GeneratedMethod> = {};
    for (const [method, [request, response, requestStream, responseStream]] of Object.entries(methods))
      rpcs[method] = { request: typeOf(request), response: typeOf(response), requestStream, responseStream };
    out[service] = rpcs;
  }
  return out;
}

/** Numbers to names; of two names for one number (an alias), the first. */
function namesOf(values: Record<string, number>): Map<number, string> {
  const names = new Map<number, string>();
  for (const [name, n] of Object.entries(values)) if (!names.has(n)) names.set(n, name);
  return names;
}

function fallback(f: Field): unknown {
  if (f.message) return null;
  if (f.enumValues) return Object.keys(f.enumValues)[0];
  if (f.scalar === 'string') return '';
  if (f.scalar === 'bool') return false;
  if (f.scalar === 'bytes') return null; // a fresh empty Buffer each time (absent())
  return LONG.has(f.scalar!) ? '0' : 0;
}

/** A value of `f` as a decoded message has it while absent. */
const absent = (f: Field): unknown => (f.scalar === 'bytes' ? Buffer.alloc(0) : f.fallback);

// ---- Encoding ----

class Writer {
  static readonly #shared = new Writer();
  buf = Buffer.allocUnsafe(256);
  pos = 0;

  /** The writer of one encoding (encoding is synchronous: one writer serves every message). */
  static start(): Writer {
    Writer.#shared.pos = 0;
    return Writer.#shared;
  }

  reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** An unsigned varint of up to 32 bits. */
  uint32(v: number): void {
    this.reserve(5);
    while (v > 127) {
      this.buf[this.pos++] = (v & 127) | 128;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
  }

  /** A varint of 64 bits (two's complement for a negative value). */
  uint64(v: bigint): void {
    let u = BigInt.asUintN(64, v);
    if (u <= 0xffffffffn) {
      this.uint32(Number(u));
      return;
    }
    this.reserve(10);
    while (u > 127n) {
      this.buf[this.pos++] = Number(u & 127n) | 128;
      u >>= 7n;
    }
    this.buf[this.pos++] = Number(u);
  }

  /** A varint of a 32-bit signed value: ten bytes when negative, as int32 and enums have it. */
  int32(v: number): void {
    if (v < 0) this.uint64(BigInt(v));
    else this.uint32(v);
  }

  bytes(b: Uint8Array): void {
    this.uint32(b.length);
    this.reserve(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  string(s: string): void {
    const n = Buffer.byteLength(s);
    this.uint32(n);
    this.reserve(n);
    this.pos += this.buf.write(s, this.pos);
  }

  /** Starts a length-delimited part: one byte kept for its length, which `ldelim` writes. */
  fork(): number {
    this.reserve(1);
    return this.pos++;
  }

  ldelim(at: number): void {
    const len = this.pos - at - 1;
    let size = 1;
    for (let v = len; v > 127; v >>>= 7) size++;
    if (size > 1) {
      this.reserve(size - 1);
      this.buf.copyWithin(at + size, at + 1, this.pos);
      this.pos += size - 1;
    }
    let p = at;
    let v = len;
    for (; v > 127; v >>>= 7) this.buf[p++] = (v & 127) | 128;
    this.buf[p] = v;
  }

  /** A copy of what was written; a buffer grown past 64 KiB is not kept for the next message. */
  finish(): Buffer {
    const out = Buffer.from(this.buf.subarray(0, this.pos));
    if (this.buf.length > 65536) this.buf = Buffer.allocUnsafe(256);
    return out;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

function writeMessage(w: Writer, m: Message, value: unknown, path: string): void {
  if (!isObject(value) || Array.isArray(value)) throw new TypeError(`${path}: object expected`);
  for (const f of m.fields) {
    const v = value[f.name];
    if (v === null || v === undefined) continue;
    if (f.map) {
      if (!isObject(v)) throw new TypeError(`${f.path}: object expected`);
      for (const k of Object.keys(v)) {
        w.uint32(f.tag);
        const at = w.fork();
        w.uint32((1 << 3) | LEN); // the key, a string
        w.string(k);
        writeOne(w, f, (2 << 3) | f.wire, v[k], true);
        w.ldelim(at);
      }
    } else if (f.repeated) {
      if (!Array.isArray(v)) throw new TypeError(`${f.path}: array expected`);
      if (!f.packed) {
        for (const item of v) writeOne(w, f, f.tag, item, true);
      } else if (v.length > 0) {
        w.uint32(f.tag);
        const at = w.fork();
        for (const item of v) writeOne(w, f, -1, item, true);
        w.ldelim(at);
      }
    } else {
      writeOne(w, f, f.tag, v, false);
    }
  }
}

/**
 * One value of `f`, behind `tag` (-1: none, an element of a packed list), converted as protobufjs's
 * `fromObject` converts it. `always`: written even at its default (a list's element, a map's value);
 * otherwise proto3 leaves a default off the wire.
 */
function writeOne(w: Writer, f: Field, tag: number, v: unknown, always: boolean): void {
  if (f.message) {
    if (tag >= 0) w.uint32(tag);
    const at = w.fork();
    writeMessage(w, f.message, v, f.path);
    w.ldelim(at);
    return;
  }
  if (f.enumValues) {
    let n = typeof v === 'number' ? v | 0 : typeof v === 'string' ? f.enumValues[v] : undefined;
    // A name the enum lacks: the field stays at its default, a list's element becomes the first value.
    if (n === undefined) {
      if (!f.repeated) return;
      n = Object.values(f.enumValues)[0]!;
    }
    if (n === 0 && !always) return;
    if (tag >= 0) w.uint32(tag);
    w.int32(n);
    return;
  }
  const type = f.scalar!;
  switch (type) {
    case 'string': {
      const s = String(v);
      if (s === '' && !always) return;
      if (tag >= 0) w.uint32(tag);
      w.string(s);
      return;
    }
    case 'bytes': {
      const b = toBytes(v, f.path);
      if (b.length === 0 && !always) return;
      if (tag >= 0) w.uint32(tag);
      w.bytes(b);
      return;
    }
    case 'bool': {
      const b = Boolean(v);
      if (!b && !always) return;
      if (tag >= 0) w.uint32(tag);
      w.uint32(b ? 1 : 0);
      return;
    }
    case 'double':
    case 'float': {
      const n = Number(v);
      if (n === 0 && !always) return;
      if (tag >= 0) w.uint32(tag);
      w.reserve(8);
      w.pos = type === 'double' ? w.buf.writeDoubleLE(n, w.pos) : w.buf.writeFloatLE(n, w.pos);
      return;
    }
    case 'int32':
    case 'uint32':
    case 'sint32':
    case 'fixed32':
    case 'sfixed32': {
      const n = type === 'uint32' || type === 'fixed32' ? Number(v) >>> 0 : Number(v) | 0;
      if (n === 0 && !always) return;
      if (tag >= 0) w.uint32(tag);
      if (type === 'int32') w.int32(n);
      else if (type === 'uint32') w.uint32(n);
      else if (type === 'sint32') w.uint32(((n << 1) ^ (n >> 31)) >>> 0);
      else {
        w.reserve(4);
        w.pos = w.buf.writeUInt32LE(n >>> 0, w.pos);
      }
      return;
    }
    default: {
      const n = toBigInt(v, f.path);
      if (n === 0n && !always) return;
      if (tag >= 0) w.uint32(tag);
      if (type === 'sint64') w.uint64((n << 1n) ^ (n >> 63n));
      else if (type === 'int64' || type === 'uint64') w.uint64(n);
      else {
        w.reserve(8);
        w.pos = w.buf.writeBigUInt64LE(BigInt.asUintN(64, n), w.pos);
      }
    }
  }
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/**
 * A 64-bit integer as protobufjs's `fromObject` reads one (with Long's rules): a decimal string
 * wraps to 64 bits, a number loses its fraction and clamps to the signed range (NaN is 0), a
 * long-like `{ low, high }` is its two halves.
 */
function toBigInt(v: unknown, path: string): bigint {
  if (typeof v === 'string') {
    const digits = v.trim();
    if (!/^[+-]?\d+$/.test(digits)) throw new TypeError(`${path}: not a 64-bit integer: "${v}"`);
    return BigInt.asIntN(64, BigInt(digits));
  }
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 0n;
    if (!Number.isFinite(v)) return v > 0 ? INT64_MAX : INT64_MIN;
    const n = BigInt(Math.trunc(v));
    return n > INT64_MAX ? INT64_MAX : n < INT64_MIN ? INT64_MIN : n;
  }
  if (typeof v === 'bigint') return BigInt.asIntN(64, v);
  if (isObject(v) && typeof v.low === 'number' && typeof v.high === 'number')
    return BigInt.asIntN(64, (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0));
  throw new TypeError(`${path}: a 64-bit integer expected`);
}

/** Bytes from a Buffer or Uint8Array, an array of numbers or a base64 string. */
function toBytes(v: unknown, path: string): Uint8Array {
  if (v instanceof Uint8Array) return v;
  if (typeof v === 'string') return Buffer.from(v, 'base64');
  if (Array.isArray(v)) return Uint8Array.from(v as number[]);
  throw new TypeError(`${path}: buffer expected`);
}

// ---- Decoding ----

class Reader {
  readonly buf: Buffer;
  pos = 0;
  readonly end: number;

  constructor(bytes: Uint8Array) {
    this.buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    this.end = this.buf.length;
  }

  outOfRange(n: number): never {
    throw new RangeError(`index out of range: ${this.pos} + ${n} > ${this.end}`);
  }

  /** A varint's low 32 bits (unsigned); `hi` holds bits 32-63 of the last one read. */
  hi = 0;
  varint(): number {
    let lo = 0;
    let shift = 0;
    let b: number;
    this.hi = 0;
    do {
      if (this.pos >= this.end) this.outOfRange(1);
      b = this.buf[this.pos++]!;
      if (shift < 28) lo |= (b & 127) << shift;
      else if (shift === 28) {
        lo |= (b & 15) << 28;
        this.hi = (b & 127) >>> 4;
      } else if (shift < 64) this.hi |= (b & 127) << (shift - 32);
      else throw new Error('invalid varint encoding');
      shift += 7;
    } while (b & 128);
    this.hi >>>= 0;
    return lo >>> 0;
  }

  /** The last varint's 64 bits. */
  long(lo: number): bigint {
    return (BigInt(this.hi) << 32n) | BigInt(lo);
  }

  /** Where a length-delimited part that starts here (with its length) ends. */
  limit(): number {
    const len = this.varint();
    if (this.pos + len > this.end) this.outOfRange(len);
    return this.pos + len;
  }

  need(n: number): number {
    const at = this.pos;
    if (at + n > this.end) this.outOfRange(n);
    this.pos += n;
    return at;
  }

  skip(wire: number): void {
    switch (wire) {
      case VARINT:
        this.varint();
        return;
      case I64:
        this.need(8);
        return;
      case LEN:
        this.need(this.varint());
        return;
      case I32:
        this.need(4);
        return;
      case 3: // a group: its fields up to the matching end-group tag
        for (;;) {
          const tag = this.varint();
          if ((tag & 7) === 4) return;
          this.skip(tag & 7);
        }
      default:
        throw new Error(`invalid wire type ${wire} at offset ${this.pos}`);
    }
  }
}

function readMessage(r: Reader, m: Message, end: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of m.fields) out[f.name] = f.map ? {} : f.repeated ? [] : absent(f);
  while (r.pos < end) {
    const tag = r.varint();
    const wire = tag & 7;
    const f = m.byId.get(tag >>> 3);
    if (!f) r.skip(wire);
    else if (f.map) {
      if (wire !== LEN) {
        r.skip(wire);
        continue;
      }
      const stop = r.limit();
      let key = '';
      let value = absent(f);
      while (r.pos < stop) {
        const t = r.varint();
        if (t === ((1 << 3) | LEN)) key = readScalar(r, 'string') as string;
        else if (t === ((2 << 3) | f.wire)) value = readOne(r, f);
        else r.skip(t & 7);
      }
      (out[f.name] as Record<string, unknown>)[key] = value;
    } else if (f.repeated) {
      const list = out[f.name] as unknown[];
      if (f.packed && wire === LEN) {
        const stop = r.limit();
        while (r.pos < stop) list.push(readOne(r, f));
      } else if (wire === f.wire) list.push(readOne(r, f));
      else r.skip(wire);
    } else if (wire === f.wire) out[f.name] = readOne(r, f);
    else r.skip(wire);
  }
  if (r.pos !== end) throw new RangeError(`a field runs ${r.pos - end} bytes past the end of its message`);
  return out;
}

/** One value of `f` (a list's element, a map's value, or the field's). */
function readOne(r: Reader, f: Field): unknown {
  if (f.message) return readMessage(r, f.message, r.limit());
  if (f.enumNames) {
    const n = r.varint() | 0;
    return f.enumNames.get(n) ?? n;
  }
  return readScalar(r, f.scalar!);
}

function readScalar(r: Reader, type: Scalar): unknown {
  switch (type) {
    case 'string': {
      const len = r.varint();
      const at = r.need(len);
      return r.buf.toString('utf8', at, at + len);
    }
    case 'bytes': {
      const len = r.varint();
      const at = r.need(len);
      return r.buf.subarray(at, at + len);
    }
    case 'bool':
      return r.varint() !== 0 || r.hi !== 0;
    case 'int32':
      return r.varint() | 0;
    case 'uint32':
      return r.varint();
    case 'sint32': {
      const n = r.varint();
      return (n >>> 1) ^ -(n & 1);
    }
    case 'fixed32':
      return r.buf.readUInt32LE(r.need(4));
    case 'sfixed32':
      return r.buf.readInt32LE(r.need(4));
    case 'float':
      return r.buf.readFloatLE(r.need(4));
    case 'double':
      return r.buf.readDoubleLE(r.need(8));
    case 'fixed64':
      return r.buf.readBigUInt64LE(r.need(8)).toString();
    case 'sfixed64':
      return r.buf.readBigInt64LE(r.need(8)).toString();
    default: {
      const lo = r.varint();
      if (type === 'uint64') return r.hi === 0 ? String(lo) : r.long(lo).toString();
      if (type === 'int64') return r.hi === 0 ? String(lo) : BigInt.asIntN(64, r.long(lo)).toString();
      const z = r.long(lo); // sint64: zigzag
      return ((z >> 1n) ^ -(z & 1n)).toString();
    }
  }
}
