// Kubernetes resource quantities (apimachinery resource.Quantity), held exactly as a fraction so
// `0.1`, `100m` and `1e-1` are the same value and rounding happens only where Kubernetes rounds.

/** An exact quantity: `num / den`, with `den > 0`. */
export interface Quantity {
  num: bigint;
  den: bigint;
}

const FORMAT = /^([+-]?)(\d+\.?\d*|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;
const BINARY: Record<string, bigint> = { Ki: 10n, Mi: 20n, Gi: 30n, Ti: 40n, Pi: 50n, Ei: 60n };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
/** Exponents past this are not resource amounts; refusing them keeps bigint arithmetic bounded. */
const MAX_EXPONENT = 64;

/** The API server's words for a malformed quantity. */
export const QUANTITY_FORMAT_MESSAGE =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** Parses `100m`, `0.5`, `2`, `128Mi`, `1G`, `1e3` (YAML may also give a plain number); throws on bad input. */
export function parseQuantity(input: string | number): Quantity {
  const text = typeof input === 'number' ? numberText(input) : input;
  const m = FORMAT.exec(text);
  if (!m) throw new Error(QUANTITY_FORMAT_MESSAGE);
  const [, sign = '', digits = '', suffix = ''] = m;
  const [whole = '', frac = ''] = digits.split('.');
  let num = BigInt(`${whole}${frac}` || '0');
  let den = 10n ** BigInt(frac.length);
  let exp = 0;
  if (suffix in BINARY) num <<= BINARY[suffix]!;
  else if (suffix in DECIMAL) exp = DECIMAL[suffix]!;
  else if (suffix) exp = Number(suffix.slice(1));
  if (Math.abs(exp) > MAX_EXPONENT) throw new Error(`quantity ${JSON.stringify(text)} is out of range`);
  if (exp >= 0) num *= 10n ** BigInt(exp);
  else den *= 10n ** BigInt(-exp);
  if (sign === '-') num = -num;
  return reduce(num, den);
}

function numberText(n: number): string {
  if (!Number.isFinite(n)) throw new Error(QUANTITY_FORMAT_MESSAGE);
  return String(n);
}

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

function reduce(num: bigint, den: bigint): Quantity {
  const g = gcd(num, den) || 1n;
  return { num: num / g, den: den / g };
}

/** Integer division rounding up (away from zero for positives, as Quantity.Value does). */
function ceilDiv(n: bigint, d: bigint): bigint {
  return n > 0n ? (n + d - 1n) / d : n / d;
}

/** The value rounded up to a whole number, like Quantity.Value() (bytes for memory). */
export const quantityValue = (q: Quantity): number => Number(ceilDiv(q.num, q.den));

/** The value in thousandths rounded up, like Quantity.MilliValue() (millicores for CPU). */
export const quantityMilliValue = (q: Quantity): number => Number(ceilDiv(q.num * 1000n, q.den));

/** The value as a float, for display and ratios. */
export const quantityToNumber = (q: Quantity): number => Number(q.num) / Number(q.den);

/** Whether the quantity is exactly zero. */
export const isZeroQuantity = (q: Quantity): boolean => q.num === 0n;
