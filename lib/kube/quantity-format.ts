// A quantity's canonical text, as apimachinery's Quantity.String() prints it (kubectl describe shows
// requests and limits this way): `0.5` → `500m`, `1024Mi` → `1Gi`, `1.5Gi` → `1536Mi`, `2000m` → `2`.
import { parseQuantity, type Quantity } from './quantity.ts';

const BINARY = /(Ki|Mi|Gi|Ti|Pi|Ei)$/;
const EXPONENT = /\d[eE][+-]?\d+$/;
const DECIMAL_SUFFIX: Record<number, string> = {
  [-9]: 'n',
  [-6]: 'u',
  [-3]: 'm',
  0: '',
  3: 'k',
  6: 'M',
  9: 'G',
  12: 'T',
  15: 'P',
  18: 'E',
};
const BINARY_SUFFIX = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/** Rounds away from zero to whole nano units, as parsing a Quantity does. */
function nanos(q: Quantity): bigint {
  const n = q.num * 1_000_000_000n;
  const abs = n < 0n ? -n : n;
  const up = (abs + q.den - 1n) / q.den;
  return n < 0n ? -up : up;
}

function decimal(q: Quantity, exponentForm: boolean): string {
  let mantissa = nanos(q);
  if (mantissa === 0n) return '0';
  let exp = -9;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exp += 1;
  }
  // The exponent becomes a multiple of 3 by growing the mantissa (Go's % keeps the sign, as JS's does).
  const r = exp % 3;
  if (r === 1 || r === -2) {
    mantissa *= 10n;
    exp -= 1;
  } else if (r === 2 || r === -1) {
    mantissa *= 100n;
    exp -= 2;
  }
  if (exponentForm) return exp === 0 ? `${mantissa}` : `${mantissa}e${exp}`;
  const suffix = DECIMAL_SUFFIX[exp];
  return `${mantissa}${suffix ?? `e${exp}`}`;
}

/** The canonical text of a quantity; input that is not a quantity comes back unchanged. */
export function formatQuantity(input: string | number): string {
  const text = typeof input === 'number' ? String(input) : input.trim();
  let q: Quantity;
  try {
    q = parseQuantity(text);
  } catch {
    return String(input);
  }
  if (BINARY.test(text)) {
    const small = q.num > -1024n * q.den && q.num < 1024n * q.den;
    // Below 1024, or not a whole number, a binary quantity prints as a decimal one (no rounding).
    if (small || q.den !== 1n) return decimal(q, false);
    let value = q.num;
    let exp = 0;
    while (exp < BINARY_SUFFIX.length - 1 && value % 1024n === 0n) {
      value /= 1024n;
      exp += 1;
    }
    return `${value}${BINARY_SUFFIX[exp]}`;
  }
  return decimal(q, EXPONENT.test(text));
}
