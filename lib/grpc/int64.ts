// The 64-bit integers of the generated codecs (int64, uint64, sint64, fixed64 fields): the shape
// protobufjs expects of its `util.Long` (low and high 32 bits, signed or not), with the arithmetic
// done by BigInt. protobufjs's own choice, the long library, instantiates a WebAssembly module for
// its arithmetic when it loads, and calling into it makes V8 compile wrappers with its optimizing
// compiler: about 3 MB of the agent's RSS for the int64 fields of CRI responses
// (docs/performance.md). lib/grpc/codec.ts installs this class; scripts/build.mjs leaves the long
// library out of the bundle.

const MASK32 = 0xffffffffn;

/** A 64-bit integer as protobufjs's generated codecs read and write it. */
export class Int64 {
  /** The low 32 bits, as a signed 32-bit number (as the long library keeps them). */
  low: number;
  /** The high 32 bits, as a signed 32-bit number. */
  high: number;
  unsigned: boolean;

  constructor(low: number, high: number, unsigned = false) {
    this.low = low | 0;
    this.high = high | 0;
    this.unsigned = unsigned;
  }

  /** The integer of two 32-bit halves (the decoder's and the generated defaults' constructor). */
  static fromBits(low: number, high: number, unsigned = false): Int64 {
    return new Int64(low, high, unsigned);
  }

  /** The integer `value` wrapped to 64 bits (two's complement), as the wire carries it. */
  static fromBigInt(value: bigint, unsigned = false): Int64 {
    const bits = BigInt.asUintN(64, value);
    return new Int64(Number(bits & MASK32), Number(bits >> 32n), unsigned);
  }

  /**
   * A decimal string (an optional sign, then digits): what `longs: String` gives and takes. It wraps
   * to 64 bits as the long library does, so that "18446744073709551615" read signed (as
   * `fromObject` reads every 64-bit field) and marked unsigned after is 2^64 - 1.
   */
  static fromString(text: string, unsigned = false): Int64 {
    const digits = text.trim();
    if (!/^[+-]?\d+$/.test(digits)) throw new TypeError(`not a 64-bit integer: "${text}"`);
    return Int64.fromBigInt(BigInt(digits), unsigned);
  }

  /** A number, its fraction dropped; NaN is 0 and out-of-range values clamp (as the long library does). */
  static fromNumber(value: number, unsigned = false): Int64 {
    if (Number.isNaN(value)) return new Int64(0, 0, unsigned);
    if (!Number.isFinite(value)) return Int64.fromBigInt(value > 0 ? max(unsigned) : min(unsigned), unsigned);
    return Int64.fromBigInt(clamp(BigInt(Math.trunc(value)), unsigned), unsigned);
  }

  /** A number, a decimal string or another `{ low, high, unsigned }` (what `fromObject` passes). */
  static fromValue(value: number | string | { low: number; high: number; unsigned?: boolean }): Int64 {
    if (typeof value === 'number') return Int64.fromNumber(value);
    if (typeof value === 'string') return Int64.fromString(value);
    return new Int64(value.low, value.high, value.unsigned ?? false);
  }

  toBigInt(): bigint {
    const bits = (BigInt(this.high >>> 0) << 32n) | BigInt(this.low >>> 0);
    return this.unsigned ? bits : BigInt.asIntN(64, bits);
  }

  /** Decimal by default: `toObject({ longs: String })` calls it on every 64-bit field. */
  toString(radix = 10): string {
    return this.toBigInt().toString(radix);
  }

  /** The nearest number (exact up to 2^53). */
  toNumber(): number {
    return Number(this.toBigInt());
  }
}

const max = (unsigned: boolean) => (unsigned ? 2n ** 64n - 1n : 2n ** 63n - 1n);
const min = (unsigned: boolean) => (unsigned ? 0n : -(2n ** 63n));
const clamp = (value: bigint, unsigned: boolean) =>
  value > max(unsigned) ? max(unsigned) : value < min(unsigned) ? min(unsigned) : value;
