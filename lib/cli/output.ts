import { customColumnsRows, parseCustomColumns } from '#lib/kube/custom-columns.ts';
import { compileJsonPath } from '#lib/kube/jsonpath.ts';
import type { KubeObject } from '#lib/kube/types.ts';
import { CliError, usageError } from './client.ts';
import { TabWriter } from './print-table.ts';

export type OutputFormat =
  | { kind: 'table'; wide: boolean }
  | { kind: 'json' }
  | { kind: 'yaml' }
  | { kind: 'name' }
  | { kind: 'jsonpath'; template: string }
  | { kind: 'custom-columns'; spec: string };

/** Parses `-o` the way kubectl does; unknown formats are an error naming the allowed ones. */
export function parseOutput(value: string | undefined): OutputFormat {
  if (value === undefined || value === '') return { kind: 'table', wide: false };
  if (value === 'wide') return { kind: 'table', wide: true };
  if (value === 'json' || value === 'yaml' || value === 'name') return { kind: value };
  const eq = value.indexOf('=');
  const [name, arg] = eq < 0 ? [value, ''] : [value.slice(0, eq), value.slice(eq + 1)];
  if (name === 'jsonpath' || name === 'jsonpath-as-json') {
    if (!arg) throw usageError('error: template format specified but no template given');
    return { kind: 'jsonpath', template: arg };
  }
  if (name === 'custom-columns') {
    if (!arg) throw usageError('error: custom-columns format specified but no custom columns given');
    return { kind: 'custom-columns', spec: arg };
  }
  throw usageError(
    `error: unable to match a printer suitable for the output format "${value}", allowed formats are: custom-columns,json,jsonpath,name,wide,yaml`,
  );
}

/** What `get -o json|yaml` prints for several objects: a v1 List. */
export const asList = (items: KubeObject[]) => ({
  apiVersion: 'v1',
  items,
  kind: 'List',
  metadata: { resourceVersion: '' },
});

/**
 * Prints objects in a non-table format; `single` is true when one object was asked for by name.
 * `-o yaml` needs `toYaml` (lib/cli/yaml.ts, loaded only for it: the YAML library is 110 KiB that
 * every other `get` would compile for nothing).
 */
export function formatObjects(
  format: OutputFormat,
  objects: KubeObject[],
  single: boolean,
  resource: string,
  toYaml?: (value: unknown) => string,
): string {
  const data = single ? objects[0] : asList(objects);
  switch (format.kind) {
    case 'json':
      return `${JSON.stringify(data, null, 4)}\n`;
    case 'yaml':
      if (!toYaml) throw new Error('-o yaml: lib/cli/yaml.ts is not loaded');
      return toYaml(data);
    case 'name':
      return objects.map((o) => `${resource}/${o.metadata.name}\n`).join('');
    case 'jsonpath':
      try {
        return compileJsonPath(format.template).execute(data, { allowMissingKeys: true });
      } catch (e) {
        throw new CliError(`error: ${(e as Error).message}`);
      }
    case 'custom-columns': {
      let rows: string[][];
      try {
        rows = customColumnsRows(parseCustomColumns(format.spec), objects);
      } catch (e) {
        throw new CliError(`error: ${(e as Error).message}`);
      }
      const tw = new TabWriter();
      tw.write(rows.map((r) => `${r.join('\t')}\n`).join(''));
      return tw.flush();
    }
    case 'table':
      throw new Error('tables are printed by the table printer');
  }
}
