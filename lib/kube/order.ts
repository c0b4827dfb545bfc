// Names in the order the API server keeps them: Go compares strings byte by byte (etcd's keys,
// and the map keys kubectl prints sorted), which for UTF-8 is code point order. Never
// `localeCompare` in the agent: its first call starts ICU's collator, 3.1 MB of resident memory
// in a bare node for as long as the process lives (docs/performance.md).

/** Compares strings by code point, which is Go's byte order for UTF-8 strings (map keys are printed sorted). */
export function compareGoStrings(a: string, b: string): number {
  if (!/[\ud800-\udfff]/.test(a + b)) return a < b ? -1 : a > b ? 1 : 0;
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}
