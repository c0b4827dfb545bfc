// Ages the way the API server prints them in Table cells (apimachinery's duration.HumanDuration):
// about two significant figures, and a small negative skew read as "now" rather than as an error.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** `5m2s`, `60m`, `3h5m`, `3d`, `2y15d`...: a duration in milliseconds as apimachinery's HumanDuration. */
export function humanDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '<invalid>';
  // Go truncates toward zero (int(d.Seconds())); up to 2s of clock skew counts as zero.
  const seconds = Math.trunc(ms / SECOND);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 2 * 60) return `${seconds}s`;

  const minutes = Math.trunc(ms / MINUTE);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 3 * 60) return `${minutes}m`;

  const hours = Math.trunc(ms / HOUR);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;

  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;

  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const dy = days % 365;
    return dy === 0 ? `${years}y` : `${years}y${dy}d`;
  }
  return `${years}y`;
}

// 0001-01-01T00:00:00Z: Go's zero time.Time, in case a client ever serializes one instead of null.
const GO_ZERO_TIME = Date.parse('0001-01-01T00:00:00Z');

/** Milliseconds since the epoch for an RFC 3339 (or MicroTime) timestamp, or undefined when it is
 * missing, unparsable or Go's zero time (what `metav1.Time.IsZero()` treats as unset). */
export function parseTimestamp(ts: string | undefined | null): number | undefined {
  if (!ts) return undefined;
  const t = Date.parse(ts);
  if (Number.isNaN(t) || t === GO_ZERO_TIME) return undefined;
  return t;
}

/** The age of a timestamp at `now` (ms), or `<unknown>` when it is missing (printers' translateTimestampSince). */
export function translateTimestampSince(ts: string | undefined | null, now: number): string {
  const t = parseTimestamp(ts);
  return t === undefined ? '<unknown>' : humanDuration(now - t);
}
