// Names in the order the API server keeps them: Go compares strings byte by byte (etcd's keys), and
// for the ASCII names Kubernetes allows, comparing UTF-16 code units gives that order. Never
// `localeCompare` in the agent: its first call starts ICU's collator, 3.1 MB of resident memory
// in a bare node for as long as the process lives (docs/performance.md).

/** Ascending by code unit: `xs.sort(byCodeUnit)`. */
export const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
