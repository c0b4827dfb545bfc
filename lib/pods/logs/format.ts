// The CRI container log format (what containerd writes, what kubelet reads): one line per record,
// `RFC3339Nano-timestamp SP stream SP tags SP message LF`, stream `stdout|stderr`, tags `F` (full)
// or `P` (partial: a line longer than the runtime's buffer, or the last bytes before EOF without a
// newline), possibly followed by more `:`-separated tags. Pure functions: no I/O here.

export type LogStream = 'stdout' | 'stderr';

/** One record of a CRI log file. */
export interface CriLogEntry {
  /** The timestamp as written (RFC3339Nano). */
  time: string;
  /** The same instant in nanoseconds since the epoch. */
  ns: bigint;
  stream: LogStream;
  partial: boolean;
  /** The message without the record's trailing newline. */
  content: Buffer;
}

/** A log line as served: partial records joined, stamped with the time its first record was written. */
export interface LogMessage {
  time: string;
  ns: bigint;
  stream: LogStream;
  content: Buffer;
  /** False for bytes that never got their newline (the container's last output, or an over-long line). */
  newline: boolean;
  /** True for the rest of an over-long line already served in part: no timestamp is printed again. */
  continuation: boolean;
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Nanoseconds since the epoch of an RFC 3339 timestamp (fractional seconds optional), or undefined. */
export function parseRfc3339(text: string): bigint | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, z, sign, oh, om] = m;
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > 31 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59)
    return undefined;
  let ms = Date.UTC(Number(y), month - 1, day, Number(h), Number(mi), Number(s));
  if (Number.isNaN(ms) || new Date(ms).getUTCDate() !== day) return undefined;
  if (!z) ms -= (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om)) * 60_000;
  return BigInt(ms) * 1_000_000n + BigInt((frac ?? '').padEnd(9, '0'));
}

// Go prints a timestamp parsed from the log with its own offset, `Z` for UTC and without trailing
// zeros in the fraction; containerd already writes that form, so this rarely changes anything.
function normalizeTime(time: string): string {
  return time
    .replace(/\.(\d*?)0+(?=[Zz+-]|$)/, (_, d: string) => (d ? `.${d}` : ''))
    .replace(/[+-]00:00$|z$/, 'Z');
}

const SP = 0x20;

/** Parses one record (without its newline); undefined for anything that is not a CRI log record. */
export function parseCriLine(line: Buffer): CriLogEntry | undefined {
  const a = line.indexOf(SP);
  if (a < 0) return undefined;
  const time = line.toString('latin1', 0, a);
  const ns = parseRfc3339(time);
  if (ns === undefined) return undefined;
  const b = line.indexOf(SP, a + 1);
  if (b < 0) return undefined;
  const stream = line.toString('latin1', a + 1, b);
  if (stream !== 'stdout' && stream !== 'stderr') return undefined;
  // kubelet requires the space after the tags; an empty full line is `... stdout F ` then LF.
  const c = line.indexOf(SP, b + 1);
  if (c < 0) return undefined;
  const tag = line.toString('latin1', b + 1, c).split(':')[0];
  return { time: normalizeTime(time), ns, stream, partial: tag === 'P', content: line.subarray(c + 1) };
}

/** The bytes one message is served as: `TIMESTAMP ` first when asked (as kubelet does), then the message. */
export function formatMessage(m: LogMessage, timestamps: boolean): Buffer {
  const parts: Buffer[] = [];
  if (timestamps && !m.continuation) parts.push(Buffer.from(`${m.time} `));
  parts.push(m.content);
  if (m.newline) parts.push(Buffer.from('\n'));
  return parts.length === 1 ? m.content : Buffer.concat(parts);
}

/** Longest joined line kept in memory; beyond it the line is served in pieces. */
export const MAX_JOINED_LINE = 1 << 20;

/**
 * Joins partial records into lines, per stream (stdout and stderr interleave freely): a line is
 * complete at its stream's next full record.
 */
export class LineJoiner {
  readonly #pending = new Map<
    LogStream,
    { first: CriLogEntry; parts: Buffer[]; size: number; served: boolean }
  >();
  readonly #max: number;

  constructor(maxLine = MAX_JOINED_LINE) {
    this.#max = maxLine;
  }

  /** Adds a record; returns the messages it completes (none, or one; more only for over-long lines). */
  push(e: CriLogEntry): LogMessage[] {
    let p = this.#pending.get(e.stream);
    if (!p) {
      if (!e.partial) return [message(e, e.content, true, false)];
      p = { first: e, parts: [], size: 0, served: false };
      this.#pending.set(e.stream, p);
    }
    p.parts.push(e.content);
    p.size += e.content.length;
    if (!e.partial) {
      this.#pending.delete(e.stream);
      return [message(p.first, Buffer.concat(p.parts), true, p.served)];
    }
    if (p.size < this.#max) return [];
    const piece = message(p.first, Buffer.concat(p.parts), false, p.served);
    p.parts = [];
    p.size = 0;
    p.served = true;
    return [piece];
  }

  /** Lines still waiting for their end, oldest first, served without a newline (the stream ended). */
  flush(): LogMessage[] {
    const out = [...this.#pending.values()]
      .sort((x, y) => (x.first.ns < y.first.ns ? -1 : x.first.ns > y.first.ns ? 1 : 0))
      .filter((p) => p.size > 0 || !p.served)
      .map((p) => message(p.first, Buffer.concat(p.parts), false, p.served));
    this.#pending.clear();
    return out;
  }
}

const message = (e: CriLogEntry, content: Buffer, newline: boolean, continuation: boolean): LogMessage => ({
  time: e.time,
  ns: e.ns,
  stream: e.stream,
  content,
  newline,
  continuation,
});
