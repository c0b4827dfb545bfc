/**
 * kubectl's `-o custom-columns=NAME:.metadata.name,...`: the spec parsing and the cell text. Alignment
 * and `--no-headers` belong to the table printer.
 */

import { compileJsonPath, type JsonPath } from './jsonpath.ts';
import { goSprint } from './jsonpath-format.ts';

export interface CustomColumn {
  header: string;
  path: JsonPath;
}

const RELAXED = /^\{\.?([^{}]+)\}$|^\.?([^{}]+)$/;

/**
 * kubectl's relaxed path: `metadata.name`, `.metadata.name`, `{metadata.name}` and `{.metadata.name}`
 * all become `{.metadata.name}`; an empty expression stays empty (and prints `<none>`).
 */
export function relaxedJsonPathExpression(expr: string): string {
  if (expr === '') return expr;
  const m = RELAXED.exec(expr);
  if (!m) {
    throw new Error(
      "unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'",
    );
  }
  return `{.${m[1] ?? m[2]}}`;
}

/**
 * Parses `<header>:<json-path-expr>[,...]`; throws kubectl's message for a bad spec, or a `JsonPathError`
 * for a path that does not parse. Commas always separate columns, so a union `[0,1]` cannot be used.
 */
export function parseCustomColumns(spec: string): CustomColumn[] {
  if (spec === '') throw new Error('custom-columns format specified but no custom columns given');
  // Every column is checked before any path is compiled, so a spec error wins over a path error (as in kubectl).
  const columns = spec.split(',').map((part) => {
    const colon = part.indexOf(':');
    if (colon < 0)
      throw new Error(`unexpected custom-columns spec: ${part}, expected <header>:<json-path-expr>`);
    return { header: part.slice(0, colon), template: relaxedJsonPathExpression(part.slice(colon + 1)) };
  });
  return columns.map(({ header, template }) => ({ header, path: compileJsonPath(template) }));
}

// printers.EscapeTerminal: no terminal escape sequences from object data reach the screen.
const escapeTerminal = (s: string): string => s.replaceAll('\x1b', '^[').replaceAll('\r', '\\r');

/**
 * The header row, then one row per object: each cell is every value found, `fmt.Sprint`-ed and joined
 * with `,` (`c1,c2`, `map[app:web]`), or `<none>` when nothing is found. Missing keys are never errors;
 * other evaluation errors (an index out of bounds) are thrown as `JsonPathError`.
 */
export function customColumnsRows(columns: CustomColumn[], objects: unknown[]): string[][] {
  const rows = [columns.map((c) => c.header)];
  for (const obj of objects) {
    rows.push(
      columns.map((c) => {
        const results = c.path.findResults(obj, { allowMissingKeys: true });
        const cells = results.length === 0 || results[0]!.length === 0 ? ['<none>'] : [];
        for (const values of results) for (const v of values) cells.push(escapeTerminal(goSprint(v)));
        return cells.join(',');
      }),
    );
  }
  return rows;
}
