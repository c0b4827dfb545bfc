/**
 * kubectl's `-o jsonpath=...` (k8s.io/client-go/util/jsonpath), evaluated over decoded JSON with the
 * output kubectl 1.32 prints, quirks included: `['a.b']` means `.a.b`, `{.}` looks up an empty key,
 * a string under `*` or `..` yields its UTF-8 bytes, and map values come out in insertion order where
 * Go's order is random.
 */
import { GoFloat, goSprint, jsonPathText } from './jsonpath-format.ts';
import { JsonPathError, type ListNode, type Node, parseTemplate, type SliceNode } from './jsonpath-parse.ts';
import { compareGoStrings } from './order.ts';

export { JsonPathError } from './jsonpath-parse.ts';

export interface JsonPathOptions {
  /** Print nothing for a missing key instead of failing (`kubectl get` turns this on). */
  allowMissingKeys?: boolean;
}

export interface JsonPath {
  readonly template: string;
  /** Renders the template: the results of one action joined by spaces, maps and arrays as JSON. */
  execute(data: unknown, opts?: JsonPathOptions): string;
  /** The raw values, one list per printed action or text, as custom columns and sort-by use them. */
  findResults(data: unknown, opts?: JsonPathOptions): unknown[][];
}

/** Compiles a template; throws a `JsonPathError` (phase `parse`) with kubectl's message when it is invalid. */
export function compileJsonPath(template: string): JsonPath {
  const root = parseTemplate(template);
  const findResults = (data: unknown, opts?: JsonPathOptions): unknown[][] => {
    const out: unknown[][] = [];
    new Evaluation(opts?.allowMissingKeys ?? false).run(root.nodes, 0, data ?? null, out);
    return out.map((values) => values.map((v) => (v instanceof GoFloat ? v.value : v)));
  };
  return {
    template,
    findResults,
    execute: (data, opts) =>
      findResults(data, opts)
        .map((values) => values.map(jsonPathText).join(' '))
        .join(''),
  };
}

/** An execution error carrying what client-go's failed step returned, which an existence filter still counts. */
class StepError extends JsonPathError {
  constructor(
    message: string,
    readonly partial: unknown[],
  ) {
    super(message, 'execute');
  }
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof GoFloat);

/** Go's type name for a decoded JSON value, as it appears in `... is not array or slice`. */
const goType = (v: unknown): string => {
  if (Array.isArray(v)) return '[]interface {}';
  if (isMap(v)) return 'map[string]interface {}';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  return typeof v === 'number' && Number.isInteger(v) ? 'int64' : 'float64';
};

/** What `*` and `..` descend into; a Go string is indexed by byte. */
const children = (v: unknown): unknown[] => {
  if (Array.isArray(v)) return v;
  if (isMap(v)) return Object.values(v).filter((x) => x !== undefined);
  if (typeof v === 'string') return [...new TextEncoder().encode(v)];
  return [];
};

class Evaluation {
  private depth = 0; // how many `{range}` blocks are open
  private ranges = 0; // `range` seen, loop not started yet
  private ends = 0; // `end` seen, block not closed yet
  private lastEnd = -1; // index of the `end` that closed the latest block

  constructor(private readonly allowMissingKeys: boolean) {}

  /** Walks root nodes from `from`, looping the rest of the template over each `{range}` result. */
  run(nodes: Node[], from: number, data: unknown, out: unknown[][] | null): void {
    for (let i = from; i < nodes.length; i++) {
      const values = this.walk([data], nodes[i]!);
      if (this.ends > 0 && this.ends <= this.depth) {
        this.ends--;
        this.lastEnd = i;
        return;
      }
      if (this.ranges > 0) {
        this.ranges--;
        this.depth++;
        // An empty range still walks its body (output dropped) so that its errors surface, as client-go does.
        if (values.length === 0) this.run(nodes, i + 1, null, null);
        for (const v of values) this.run(nodes, i + 1, v, out);
        this.depth--;
        if (this.lastEnd > i) i = this.lastEnd; // resume after the `{end}`; without one, after the `{range}`
        continue;
      }
      out?.push(values);
    }
  }

  private walk(input: unknown[], node: Node): unknown[] {
    switch (node.kind) {
      case 'list':
        return this.list(input, node);
      case 'text':
        return [node.text];
      case 'field':
        return this.field(input, node.name);
      case 'slice':
        return this.slice(input, node);
      case 'filter':
        return this.filter(input, node.left, node.op, node.right);
      case 'int':
      case 'bool':
        return input.map(() => node.value);
      case 'float':
        return input.map(() => new GoFloat(node.value));
      case 'wildcard':
        return input.flatMap(children);
      case 'recursive':
        return input.flatMap((v) => this.descend(v));
      case 'union':
        try {
          return node.members.flatMap((m) => this.list(input, m));
        } catch (e) {
          throw e instanceof StepError ? new StepError(e.message, input) : e;
        }
      case 'identifier':
        return this.identifier(input, node.name);
    }
  }

  private list(input: unknown[], node: ListNode): unknown[] {
    return node.nodes.reduce((values, n) => this.walk(values, n), input);
  }

  private identifier(input: unknown[], name: string): unknown[] {
    if (name === 'range') {
      this.ranges++;
      return input;
    }
    if (name !== 'end') throw new StepError(`unrecognized identifier ${name}`, input);
    if (this.depth === 0) throw new StepError('not in range, nothing to end', []);
    this.ends++;
    return [];
  }

  private field(input: unknown[], name: string): unknown[] {
    if (input.length === 0) return [];
    // A present key counts even when its value is null; null itself and non-maps have no fields.
    const found = input
      .filter(isMap)
      .flatMap((m) => (Object.hasOwn(m, name) && m[name] !== undefined ? [m[name]] : []));
    if (found.length > 0 || this.allowMissingKeys) return found;
    throw new StepError(`${name} is not found`, []);
  }

  private slice(input: unknown[], node: SliceNode): unknown[] {
    const out: unknown[] = [];
    for (const v of input) {
      if (v === null) continue;
      if (!Array.isArray(v)) throw new StepError(`${goType(v)} is not array or slice`, input);
      const len = v.length;
      let start = node.start ?? 0;
      if (start < 0) start += len;
      let end = node.end ?? len;
      if (end < 0 || (end === 0 && node.derivedEnd)) end += len;
      if (start === end) return out; // an empty slice ends the whole step, as in client-go
      if (start < 0 || start >= len)
        throw new StepError(`array index out of bounds: index ${start}, length ${len}`, input);
      if (end < 0 || end > len)
        throw new StepError(`array index out of bounds: index ${end - 1}, length ${len}`, input);
      if (start > end)
        throw new StepError(`starting index ${start} is greater than ending index ${end}`, input);
      const step = node.step ?? 1;
      if (step <= 0) throw new StepError('step must be > 0', input);
      for (let i = start; i < end; i += step) out.push(v[i]);
    }
    return out;
  }

  /** `..`: every value that has something to descend into (non-empty maps, arrays and strings), pre-order. */
  private descend(v: unknown): unknown[] {
    const kids = v === null ? [] : children(v);
    return kids.length === 0 ? [] : [v, ...kids.flatMap((k) => this.descend(k))];
  }

  private filter(input: unknown[], left: ListNode, op: string, right: ListNode): unknown[] {
    const out: unknown[] = [];
    for (const v of input) {
      if (!Array.isArray(v))
        throw new StepError(`${goSprint(v)} is not array or slice and cannot be filtered`, input);
      for (const item of v) {
        if (op === 'exists') {
          // Errors are ignored here, but whatever the failed step returned still counts as a match.
          let lefts: unknown[];
          try {
            lefts = this.list([item], left);
          } catch (e) {
            if (!(e instanceof StepError)) throw e;
            lefts = e.partial;
          }
          if (lefts.length > 0) out.push(item);
          continue;
        }
        const a = this.operand(input, item, left);
        if (a === undefined) continue;
        const b = this.operand(input, item, right);
        if (b === undefined) continue;
        let pass: boolean;
        try {
          pass = compare(a, op, b);
        } catch (e) {
          throw e instanceof JsonPathError ? new StepError(e.message, out) : e;
        }
        if (pass) out.push(item);
      }
    }
    return out;
  }

  /** One side of a comparison: its single value, or undefined when there is none (the item is skipped). */
  private operand(input: unknown[], item: unknown, side: ListNode): unknown {
    let values: unknown[];
    try {
      values = this.list([item], side);
    } catch (e) {
      throw e instanceof StepError ? new StepError(e.message, input) : e;
    }
    if (values.length > 1) throw new StepError('can only compare one element at a time', input);
    return values[0];
  }
}

type Kind = 'bool' | 'int' | 'float' | 'string';

/** Go text/template's kinds: comparing different kinds, or anything but scalars, is an error. */
const kindOf = (v: unknown): Kind => {
  if (v instanceof GoFloat) return 'float';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  throw new JsonPathError('invalid type for comparison', 'execute');
};

const scalar = (v: unknown): number | string | boolean => (v instanceof GoFloat ? v.value : (v as number));

function equal(a: unknown, b: unknown): boolean {
  if (kindOf(a) !== kindOf(b)) throw new JsonPathError('incompatible types for comparison', 'execute');
  return scalar(a) === scalar(b);
}

function less(a: unknown, b: unknown): boolean {
  const kind = kindOf(a);
  if (kind !== kindOf(b)) throw new JsonPathError('incompatible types for comparison', 'execute');
  if (kind === 'bool') throw new JsonPathError('invalid type for comparison', 'execute');
  if (kind === 'string') return compareGoStrings(a as string, b as string) < 0;
  return scalar(a) < scalar(b);
}

function compare(a: unknown, op: string, b: unknown): boolean {
  switch (op) {
    case '==':
      return equal(a, b);
    case '!=':
      return !equal(a, b);
    case '<':
      return less(a, b);
    case '<=':
      return less(a, b) || equal(a, b);
    case '>':
      return !(less(a, b) || equal(a, b));
    case '>=':
      return !less(a, b);
    default:
      throw new JsonPathError(`unrecognized filter operator ${op}`, 'execute');
  }
}
