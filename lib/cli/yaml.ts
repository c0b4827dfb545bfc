// kubectl's YAML output, apart from lib/cli/output.ts so that only the commands that print
// YAML load the YAML library.
import { stringify } from 'yaml';

/** kubectl's YAML: keys sorted (it goes through a JSON map), YAML 1.1 quoting, sequences not indented. */
export function toYaml(value: unknown): string {
  return stringify(sortKeys(value), { version: '1.1', indentSeq: false, lineWidth: 0 });
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}
