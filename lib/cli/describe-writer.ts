// The text machinery of `kubectl describe` (k8s.io/kubectl/pkg/describe): a prefix writer over Go's
// text/tabwriter set up as tabbedString does (min width 0, padding 2, no remembered widths), Go's
// RFC1123Z times in the local zone, and the label, annotation and event blocks every describer shares.
import { humanDuration, parseTimestamp } from '#lib/kube/duration.ts';
import type { CoreEvent } from '#lib/kube/printers/events.ts';
import { TabWriter } from './print-table.ts';

/** Indentation levels: two spaces each. */
export const LEVEL_0 = 0;
export const LEVEL_1 = 1;
export const LEVEL_2 = 2;
export const LEVEL_3 = 3;

/** kubectl's PrefixWriter: indents, escapes terminal control characters, writes into a tabwriter. */
export class PrefixWriter {
  readonly #tw = new TabWriter(0, 2, false);
  #out = '';

  write(level: number, text: string): void {
    // printers.WriteEscaped: ESC and CR would let an object's fields drive the terminal.
    this.#tw.write(`${'  '.repeat(level)}${text}`.replaceAll('\x1b', '^[').replaceAll('\r', '\\r'));
  }

  /** fmt.Sprintln of one value, at no indentation. */
  writeLine(text: string): void {
    this.write(LEVEL_0, `${text}\n`);
  }

  /** Formats what is buffered so far: later lines no longer widen its columns. */
  flush(): void {
    this.#out += this.#tw.flush();
  }

  toString(): string {
    this.flush();
    return this.#out;
  }
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Go's `time.RFC1123Z` in the local zone (metav1.Time decodes to Local); unset is Go's zero time. */
export function rfc1123z(ts: string | null | undefined): string {
  const t = parseTimestamp(ts);
  if (t === undefined) return 'Mon, 01 Jan 0001 00:00:00 +0000';
  const d = new Date(t);
  const off = -d.getTimezoneOffset();
  const zone = `${off < 0 ? '-' : '+'}${pad(Math.trunc(Math.abs(off) / 60))}${pad(Math.abs(off) % 60)}`;
  return (
    `${DAYS[d.getDay()]}, ${pad(d.getDate())} ${MONTHS[d.getMonth()]} ${pad(d.getFullYear(), 4)} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())} ${zone}`
  );
}

/** translateTimestampSince: `<unknown>` for an unset time, else HumanDuration of the age. */
export function since(ts: string | null | undefined, now: number): string {
  const t = parseTimestamp(ts);
  return t === undefined ? '<unknown>' : humanDuration(now - t);
}

/** `Title:\tk=v` then one `\tk=v` line per further label, sorted; `<none>` when empty. */
export function printLabelsMultiline(
  w: PrefixWriter,
  title: string,
  labels: Record<string, string> | undefined | null,
): void {
  w.write(LEVEL_0, `${title}:\t`);
  const keys = Object.keys(labels ?? {}).sort();
  if (keys.length === 0) {
    w.writeLine('<none>');
    return;
  }
  keys.forEach((key, i) => {
    if (i !== 0) w.write(LEVEL_0, '\t');
    w.write(LEVEL_0, `${key}=${labels![key]}\n`);
  });
}

const MAX_ANNOTATION_LEN = 140;
const SKIPPED_ANNOTATIONS = new Set(['kubectl.kubernetes.io/last-applied-configuration']);
const byteLength = (s: string) => Buffer.byteLength(s);
const shorten = (s: string, max: number) =>
  byteLength(s) > max ? `${Buffer.from(s).subarray(0, max).toString()}...` : s;

/** Annotations sorted, `key: value`; long or multi-line values go below their key, shortened. */
export function printAnnotationsMultiline(
  w: PrefixWriter,
  title: string,
  annotations: Record<string, string> | undefined | null,
): void {
  w.write(LEVEL_0, `${title}:\t`);
  const keys = Object.keys(annotations ?? {})
    .filter((k) => !SKIPPED_ANNOTATIONS.has(k))
    .sort();
  if (keys.length === 0) {
    w.writeLine('<none>');
    return;
  }
  keys.forEach((key, i) => {
    if (i !== 0) w.write(LEVEL_0, '\t');
    const value = annotations![key]!.replace(/\n$/, '');
    if (byteLength(value) + byteLength(key) + 2 > MAX_ANNOTATION_LEN || value.includes('\n')) {
      w.write(LEVEL_0, `${key}:\n`);
      for (const line of value.split('\n'))
        w.write(LEVEL_0, `\t  ${shorten(line, MAX_ANNOTATION_LEN - 2)}\n`);
    } else {
      w.write(LEVEL_0, `${key}: ${value}\n`);
    }
  });
}

// kubectl's SortableEvents key: the series' last observation, else lastTimestamp, else eventTime.
const eventTime = (e: CoreEvent) =>
  parseTimestamp(e.series?.lastObservedTime) ??
  parseTimestamp(e.lastTimestamp) ??
  parseTimestamp(e.eventTime) ??
  Number.NEGATIVE_INFINITY;

/** The Events block: a Type/Reason/Age/From/Message table oldest first, or `Events: <none>`. */
export function describeEvents(w: PrefixWriter, events: readonly CoreEvent[], now: number): void {
  if (events.length === 0) {
    w.write(LEVEL_0, 'Events:\t<none>\n');
    return;
  }
  w.flush();
  // Go's sort.Sort is an insertion sort (stable) up to 12 items; a stable sort agrees with it there.
  const sorted = [...events].sort((a, b) => eventTime(a) - eventTime(b));
  w.write(LEVEL_0, 'Events:\n  Type\tReason\tAge\tFrom\tMessage\n');
  w.write(LEVEL_1, '----\t------\t----\t----\t-------\n');
  for (const e of sorted) {
    const first = parseTimestamp(e.eventTime) ? since(e.eventTime, now) : since(e.firstTimestamp, now);
    let interval = first;
    if (e.series)
      interval = `${since(e.series.lastObservedTime, now)} (x${e.series.count ?? 0} over ${first})`;
    else if ((e.count ?? 0) > 1) interval = `${since(e.lastTimestamp, now)} (x${e.count} over ${first})`;
    const source = e.source?.component || e.reportingComponent || '';
    w.write(
      LEVEL_1,
      `${e.type ?? ''}\t${e.reason ?? ''}\t${interval}\t${source}\t${(e.message ?? '').trim()}\n`,
    );
  }
}
