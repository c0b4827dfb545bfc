// YAML for the CLI (kubectl's output format, kubeconfigs), apart from the modules that use it so
// that only a command that prints or reads YAML loads the YAML library (import this module with
// `await import()`: a dynamic import of the library itself gives only its CommonJS default in the
// bundle).
import { parse, stringify } from 'yaml';

export { parse as parseYaml };

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
