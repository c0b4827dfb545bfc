// Renders a meta.k8s.io/v1 Table the way kubectl's human-readable printer does (cli-runtime
// HumanReadablePrinter over liggitt/tabwriter), so `outpost get` output is byte-for-byte kubectl's.
import type { Table, TableColumnDefinition, TableRow } from '#lib/kube/table.ts';

/** The `kubectl get` flags that shape human-readable output. */
export interface PrintOptions {
  /** `-o wide`: include priority > 0 columns. */
  wide?: boolean | undefined;
  /** `-A`: prepend NAMESPACE, read from each row's object metadata. */
  withNamespace?: boolean | undefined;
  /** `--show-labels`: append LABELS (`k=v,k2=v2`, sorted, `<none>`). */
  showLabels?: boolean | undefined;
  /** `--no-headers`. */
  noHeaders?: boolean | undefined;
}

interface Cell {
  text: string;
  width: number;
}

/** Go's text/tabwriter as kubectl configures it (minwidth 6, padding 3, pad ' ', RememberWidths):
 * cells end at '\t', the last cell of a line is never padded, and a column's width is the widest cell
 * of its block of consecutive lines plus padding, never less than any width used before a flush. */
export class TabWriter {
  private lines: Cell[][] = [[]];
  private cell = '';
  private out = '';
  private widths: number[] = [];
  private readonly maxWidths: number[] = [];

  constructor(
    private readonly minWidth = 6,
    private readonly padding = 3,
    /** Off for plain Go text/tabwriter (kubectl describe): widths are per block only. */
    private readonly rememberWidths = true,
  ) {}

  /** Buffers text; like Go, a line without tabs flushes what came before it. */
  write(text: string): void {
    for (const ch of text) {
      if (ch === '\t' || ch === '\v') {
        this.terminateCell();
      } else if (ch === '\n') {
        const cells = this.terminateCell();
        this.lines.push([]);
        if (cells === 1) this.flushInto();
      } else {
        this.cell += ch;
      }
    }
  }

  /** Formats everything buffered and returns the text written since the last flush. */
  flush(): string {
    this.flushInto();
    const out = this.out;
    this.out = '';
    return out;
  }

  private terminateCell(): number {
    const line = this.lines[this.lines.length - 1]!;
    // Width in code points, as Go counts runes.
    line.push({ text: this.cell, width: [...this.cell].length });
    this.cell = '';
    return line.length;
  }

  private flushInto(): void {
    if (this.cell.length > 0) this.terminateCell();
    this.format(0, this.lines.length);
    this.lines = [[]];
    this.widths = [];
  }

  private format(line0: number, line1: number): void {
    const col = this.widths.length;
    for (let t = line0; t < line1; t++) {
      if (col >= this.lines[t]!.length - 1) continue;
      // A block of consecutive lines that all have a cell in this column starts here.
      this.writeLines(line0, t);
      line0 = t;
      let width = this.minWidth;
      for (; t < line1; t++) {
        const line = this.lines[t]!;
        if (col >= line.length - 1) break;
        width = Math.max(width, line[col]!.width + this.padding);
      }
      // RememberWidths: a column never gets narrower than it was in an earlier flush.
      if (this.rememberWidths) {
        if (this.maxWidths.length < col) this.maxWidths.push(...this.widths.slice(this.maxWidths.length));
        if (this.maxWidths.length === col) this.maxWidths.push(width);
        else width = this.maxWidths[col] = Math.max(width, this.maxWidths[col]!);
      }
      this.widths.push(width);
      this.format(line0, t);
      this.widths.pop();
      line0 = t;
    }
    this.writeLines(line0, line1);
  }

  private writeLines(line0: number, line1: number): void {
    for (let i = line0; i < line1; i++) {
      for (const [j, c] of this.lines[i]!.entries()) {
        this.out += c.text;
        const w = this.widths[j];
        if (w !== undefined) this.out += ' '.repeat(w - c.width);
      }
      // The last buffered line is the unfinished one: no newline yet.
      if (i + 1 < this.lines.length) this.out += '\n';
    }
  }
}

/** `k=v,k2=v2` with keys sorted, or `<none>` (apimachinery labels.FormatLabels). */
export function formatLabels(labels: Record<string, string> | undefined | null): string {
  const keys = Object.keys(labels ?? {}).sort();
  if (keys.length === 0) return '<none>';
  return keys.map((k) => `${k}=${labels![k]}`).join(',');
}

/** What kubectl prints on stderr when a list is empty: namespaced unless `-A` or cluster-scoped. */
export function noResourcesFound(namespace?: string): string {
  return namespace ? `No resources found in ${namespace} namespace.\n` : 'No resources found\n';
}

/** A cell value as Go's fmt.Sprint prints the JSON-decoded value (integers decode as int64). */
export function formatCell(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') {
    if (Number.isInteger(value) || !Number.isFinite(value)) return goNumber(value);
    // %v on a float64 is %g with the shortest digits: exponent form below 1e-4 and from 1e6 on.
    const [mantissa, exp] = value.toExponential().split('e') as [string, string];
    const e = Number(exp);
    if (e < -4 || e >= 6) return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
    return String(value);
  }
  if (Array.isArray(value)) return `[${value.map(formatCell).join(' ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `map[${entries.map(([k, v]) => `${k}:${formatCell(v)}`).join(' ')}]`;
  }
  return String(value);
}

const goNumber = (n: number): string =>
  Number.isNaN(n) ? 'NaN' : n === Infinity ? '+Inf' : n === -Infinity ? '-Inf' : n.toFixed(0);

// kubectl cuts a string cell at its first line break (tabwriter would start a new line there) and
// marks the cut, and escapes ESC and CR so a cell cannot drive the terminal (kubernetes#101695).
function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = formatCell(value);
  const cut = typeof value === 'string' ? text.search(/[\f\n\r]/) : -1;
  if (cut >= 0) text = `${text.slice(0, cut)}...`;
  return text.replaceAll('\x1b', '^[').replaceAll('\r', '\\r');
}

// kubectl reads NAMESPACE and LABELS through a metadata accessor: any row object has one (possibly
// empty); a row without an object (includeObject=None) has none.
const metadataOf = (row: TableRow): { namespace?: unknown; labels?: unknown } | undefined => {
  if (!row.object || typeof row.object !== 'object') return undefined;
  const meta = (row.object as { metadata?: unknown }).metadata;
  return meta && typeof meta === 'object' ? meta : {};
};

const sameColumns = (a: readonly TableColumnDefinition[], b: readonly TableColumnDefinition[]): boolean =>
  JSON.stringify(a) === JSON.stringify(b);

/** kubectl's HumanReadablePrinter: prints Tables one after another through one tabwriter, so a watch
 * (`get -w`) shows the header once and each later row aligned to the widths already on screen. */
export class TablePrinter {
  private readonly tw = new TabWriter();
  private lastColumns: TableColumnDefinition[] = [];
  private printedHeaders = false;

  constructor(private readonly opts: PrintOptions = {}) {}

  /** Renders a Table (a list, or one watch event's Table) and returns the text to write to stdout. */
  print(table: Table): string {
    let noHeaders = this.opts.noHeaders ?? false;
    let columns = table.columnDefinitions ?? [];
    if (this.printedHeaders && (columns.length === 0 || sameColumns(columns, this.lastColumns)))
      noHeaders = true;
    // Watch events after the first carry no column definitions: reuse the last ones.
    if (columns.length === 0) columns = this.lastColumns;
    else if (!sameColumns(columns, this.lastColumns)) {
      this.lastColumns = columns;
      this.printedHeaders = false;
    }
    const rows = table.rows ?? [];
    if (rows.length > 0) this.printedHeaders = true;
    this.tw.write(this.render(columns, rows, noHeaders));
    return this.tw.flush();
  }

  // decorateTable + printTable: optional NAMESPACE first and LABELS last, priority filtering,
  // header only when there are rows, cells beyond the column definitions dropped.
  private render(
    defs: readonly TableColumnDefinition[],
    rows: readonly TableRow[],
    noHeaders: boolean,
  ): string {
    const { wide, withNamespace, showLabels } = this.opts;
    const extra = (name: string) => ({ name, type: 'string', format: '', description: '', priority: 0 });
    const columns = [
      ...(withNamespace ? [extra('Namespace')] : []),
      ...defs,
      ...(showLabels ? [extra('Labels')] : []),
    ];
    const visible = columns.map((c) => wide || c.priority === 0);
    let text = '';
    if (!noHeaders) {
      if (rows.length === 0) return '';
      text += `${columns
        .filter((_, i) => visible[i])
        .map((c) => c.name.toUpperCase())
        .join('\t')}\n`;
    }
    for (const row of rows) {
      const meta = metadataOf(row);
      let cells: unknown[] = row.cells ?? [];
      if (meta) {
        if (withNamespace) cells = [meta.namespace ?? '', ...cells];
        if (showLabels) cells = [...cells, formatLabels(meta.labels as Record<string, string> | undefined)];
      } else if (withNamespace || showLabels) {
        if (withNamespace) cells = [null, ...cells];
        // Go re-reads len(cells) as it appends, so this fills about half the gap; kept as kubectl does.
        for (let j = 0; j < columns.length - cells.length; j++) cells.push(null);
      }
      text += `${cells
        .slice(0, columns.length)
        .filter((_, i) => visible[i])
        .map(cellText)
        .join('\t')}\n`;
    }
    return text;
  }
}

/** One `kubectl get` table as text (header, aligned rows), or '' when it has no rows to show. */
export function printTable(table: Table, opts: PrintOptions = {}): string {
  return new TablePrinter(opts).print(table);
}
