// Serving a container's CRI log the way kubelet does for `kubectl logs`: rotated files first, then
// the current one, filtered by stream, time, line count and byte count, optionally followed while
// the container runs.
import { dirname } from 'node:path';
import { DirWatch, FileTail, modifiedNs, readWhole, rotatedLogs } from './files.ts';
import { formatMessage, LineJoiner, type LogMessage, type LogStream, parseCriLine } from './format.ts';

/** What to serve of a log (core/v1 PodLogOptions, resolved). */
export interface LogOptions {
  /** Only this stream; both when unset. */
  stream?: LogStream | undefined;
  /** Only the last N lines (counted after the other filters). */
  tailLines?: number | undefined;
  /** Only lines written at or after this instant, in nanoseconds since the epoch. */
  sinceNs?: bigint | undefined;
  /** Each line prefixed with its RFC3339Nano timestamp and a space. */
  timestamps?: boolean | undefined;
  /** At most this many bytes of output, the last line cut if need be. */
  limitBytes?: number | undefined;
}

export interface FollowOptions {
  /** Asked whenever the log has been quiet for `idleMs`: false once the container can write no more. */
  running: () => Promise<boolean>;
  /** Ends following at once (the client left, the server is shutting down). */
  signal: AbortSignal;
  /** Quiet time before `running` is asked again. Default 1000 ms. */
  idleMs?: number;
}

/** Where the output goes, one chunk per batch of lines read; the returned promise applies backpressure. */
export type LogSink = (chunk: Buffer) => Promise<void>;

/**
 * Writes the log whose current file is `path` (rotated siblings first) to `sink`; with `follow`,
 * keeps writing lines as they are appended until the container stops or `follow.signal` aborts.
 */
export async function writeContainerLog(
  path: string,
  opts: LogOptions,
  sink: LogSink,
  follow?: FollowOptions,
): Promise<void> {
  const p = new Pipeline(opts, sink);
  const split = new LineSplitter();
  const line = (l: Buffer) => p.line(l);
  // The bytes after the last LF: a record still being written, served as far as it got (kubelet too).
  const cut = (l: Buffer) => p.line(l, true);
  for (const file of rotatedLogs(path)) {
    if (p.done) return;
    // A rotated file last written before `since` holds nothing newer.
    if (opts.sinceNs !== undefined && (modifiedNs(file) ?? opts.sinceNs) < opts.sinceNs) continue;
    try {
      for await (const chunk of readWhole(file)) {
        split.push(chunk as Buffer, line);
        await p.flush();
        if (p.done) return;
      }
    } catch {
      // A damaged rotated file (a cut gzip) must not hide the newer lines: go on with what was read.
    }
    split.end(cut);
  }

  const tail = new FileTail(path);
  try {
    await drain(tail, split, p);
    if (!follow) {
      split.end(cut);
      p.endPartials();
      p.endHistory();
      return await p.flush();
    }
    p.endHistory();
    await p.flush();
    await followFile(tail, split, p, follow);
  } finally {
    await tail.close();
  }
}

async function followFile(tail: FileTail, split: LineSplitter, p: Pipeline, f: FollowOptions): Promise<void> {
  const watch = new DirWatch(dirname(tail.path));
  const idleMs = f.idleMs ?? 1000;
  // Without a watch (no directory yet) the file is polled more often; the runtime is still asked
  // only once the log has been quiet for idleMs.
  const pollMs = watch.watching ? idleMs : Math.min(idleMs, 250);
  let quietMs = 0;
  try {
    while (!p.done && !f.signal.aborted) {
      if ((await drain(tail, split, p)) || (await tail.moved()) || (await watch.wait(pollMs, f.signal))) {
        quietMs = 0;
        continue;
      }
      quietMs += pollMs;
      if (quietMs < idleMs) continue;
      quietMs = 0;
      if (f.signal.aborted || (await f.running())) continue;
      // The container is gone: its last writes may land just after its state changed.
      await watch.wait(200, f.signal);
      for (let more = true; more; ) more = (await drain(tail, split, p)) || (await tail.moved());
      split.end((l) => p.line(l, true));
      p.endPartials();
      await p.flush();
      return;
    }
  } finally {
    watch.close();
  }
}

/** Reads whatever the file holds past the last read; true when anything was read. */
async function drain(tail: FileTail, split: LineSplitter, p: Pipeline): Promise<boolean> {
  let any = false;
  for (let chunk = await tail.next(); chunk; chunk = p.done ? undefined : await tail.next()) {
    any = true;
    split.push(chunk, (l) => p.line(l));
    await p.flush();
  }
  return any;
}

// A CRI record is at most the runtime's line buffer (16 KiB in containerd) plus its header: anything
// far longer is not a record, and is skipped rather than kept in memory.
const MAX_RECORD = 1 << 20;

/** Cuts chunks into records at LF; a record split across chunks is put back together. */
export class LineSplitter {
  #carry: Buffer[] = [];
  #carried = 0;
  #skipping = false;

  push(chunk: Buffer, onLine: (line: Buffer) => void): void {
    let start = 0;
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, i);
      start = i + 1;
      if (this.#skipping) {
        this.#skipping = false;
        continue;
      }
      if (this.#carry.length === 0) onLine(piece);
      else {
        this.#carry.push(piece);
        onLine(Buffer.concat(this.#carry));
        this.#carry = [];
        this.#carried = 0;
      }
    }
    if (start >= chunk.length || this.#skipping) return;
    this.#carry.push(chunk.subarray(start));
    this.#carried += chunk.length - start;
    if (this.#carried > MAX_RECORD) {
      this.#carry = [];
      this.#carried = 0;
      this.#skipping = true;
    }
  }

  /** The end of the input: a last record without its LF still counts. */
  end(onLine: (line: Buffer) => void): void {
    if (this.#carry.length) onLine(Buffer.concat(this.#carry));
    this.#carry = [];
    this.#carried = 0;
    this.#skipping = false;
  }
}

/** Records in, output bytes out: stream and time filters, partial joining, the tail, the byte limit. */
class Pipeline {
  readonly #opts: LogOptions;
  readonly #sink: LogSink;
  readonly #joiner = new LineJoiner();
  /** The last `tailLines` messages of the history, as a ring. */
  #ring: LogMessage[] | undefined;
  #seen = 0;
  #batch: Buffer[] = [];
  #left: number;
  /** The byte limit was reached: nothing more is read or written. */
  done = false;

  constructor(opts: LogOptions, sink: LogSink) {
    this.#opts = opts;
    this.#sink = sink;
    this.#left = opts.limitBytes ?? Number.POSITIVE_INFINITY;
    if (opts.tailLines !== undefined) this.#ring = [];
  }

  /** One record; `cut` when its end is not written yet (it is then served without a newline). */
  line(raw: Buffer, cut = false): void {
    if (this.done) return;
    const e = parseCriLine(raw);
    if (!e || (this.#opts.stream && e.stream !== this.#opts.stream)) return;
    if (cut) e.partial = true;
    for (const m of this.#joiner.push(e)) this.#message(m);
  }

  /** The input ended: lines still waiting for their end are served as they are. */
  endPartials(): void {
    for (const m of this.#joiner.flush()) this.#message(m);
  }

  /** The history is read: the tail goes out, and from now on every line as it comes. */
  endHistory(): void {
    const ring = this.#ring;
    if (!ring) return;
    this.#ring = undefined;
    const n = ring.length;
    const first = this.#seen > n ? this.#seen % n : 0;
    for (let i = 0; i < n; i++) this.#emit(ring[(first + i) % n]!);
  }

  #message(m: LogMessage): void {
    if (this.#opts.sinceNs !== undefined && m.ns < this.#opts.sinceNs) return;
    const ring = this.#ring;
    const max = this.#opts.tailLines ?? 0;
    if (!ring) this.#emit(m);
    else if (max > 0) ring[this.#seen++ % max] = m;
  }

  #emit(m: LogMessage): void {
    if (this.done) return;
    let bytes = formatMessage(m, this.#opts.timestamps ?? false);
    if (bytes.length >= this.#left) {
      bytes = bytes.subarray(0, this.#left);
      this.done = true;
    }
    this.#left -= bytes.length;
    this.#batch.push(bytes);
  }

  /** Hands what was produced since the last call to the sink, as one chunk. */
  async flush(): Promise<void> {
    if (this.#batch.length === 0) return;
    const chunk = this.#batch.length === 1 ? this.#batch[0]! : Buffer.concat(this.#batch);
    this.#batch = [];
    if (chunk.length) await this.#sink(chunk);
  }
}
