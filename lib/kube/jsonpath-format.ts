/**
 * Go's ways of turning decoded JSON into text, as kubectl's printers use them: `json.Marshal` for maps and
 * arrays in `-o jsonpath`, `fmt.Print` for scalars there and for every value in `-o custom-columns`.
 *
 * kubectl decodes objects as unstructured JSON, where a whole number is an int64 and anything else a
 * float64; a JS number stands for whichever of the two its value implies, so `2.0` prints as `2`.
 */
import { compareGoStrings } from './order.ts';

/** A float literal written in a template (`1.0`): Go keeps it a float64, which matters to filter comparisons. */
export class GoFloat {
  constructor(readonly value: number) {}
}

const isInt64 = (n: number): boolean => Number.isInteger(n) && Math.abs(n) < 2 ** 63;

/** Go's `%v` of a float64: shortest digits, in exponent form below 1e-4 or from 1e6 (`1.2345675e+06`). */
export function goFloat(n: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'NaN' : n > 0 ? '+Inf' : '-Inf';
  const [mantissa, exp] = n.toExponential().split('e') as [string, string];
  const e = Number(exp);
  if (e >= -4 && e < 6) return String(n);
  return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
}

const entries = (o: object): [string, unknown][] =>
  Object.entries(o)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => compareGoStrings(a, b));

/** Go's `json.Marshal`: sorted keys, no spaces, `<`, `>`, `&`, U+2028 and U+2029 escaped. */
export function goJson(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (v instanceof GoFloat) return goJson(v.value);
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v).replace(
        /[<>&\u2028\u2029]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
      );
    case 'number':
      // Go writes floats like JS does (exponent from 1e21 or below 1e-6); int64s exactly.
      return isInt64(v) ? BigInt(v).toString() : String(v);
    case 'boolean':
      return String(v);
    case 'object':
      if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
      return `{${entries(v)
        .map(([k, x]) => `${goJson(k)}:${goJson(x)}`)
        .join(',')}}`;
    default:
      return JSON.stringify(String(v));
  }
}

/** Go's `fmt.Sprint` of a decoded JSON value: `<nil>`, `map[a:1 b:x]`, `[1 2]`, strings unquoted. */
export function goSprint(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (v instanceof GoFloat) return goFloat(v.value);
  if (typeof v === 'number') return isInt64(v) ? BigInt(v).toString() : goFloat(v);
  if (Array.isArray(v)) return `[${v.map(goSprint).join(' ')}]`;
  if (typeof v === 'object')
    return `map[${entries(v)
      .map(([k, x]) => `${k}:${goSprint(x)}`)
      .join(' ')}]`;
  return String(v);
}

/** One `-o jsonpath` result: maps and arrays as JSON, everything else as `fmt.Print` does, null as `null`. */
export function jsonPathText(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  return typeof v === 'object' && !(v instanceof GoFloat) ? goJson(v) : goSprint(v);
}
