/**
 * Parser for kubectl's JSONPath templates (k8s.io/client-go/util/jsonpath): literal text mixed with
 * `{...}` actions. Behaviour, including the odd corners, follows kubectl 1.32; see jsonpath.ts.
 */

/** A template that cannot be parsed or executed; the message is the one kubectl prints after its prefix. */
export class JsonPathError extends Error {
  readonly phase: 'parse' | 'execute';

  constructor(message: string, phase: 'parse' | 'execute') {
    super(message);
    this.name = 'JsonPathError';
    this.phase = phase;
  }
}

export interface ListNode {
  kind: 'list';
  nodes: Node[];
}

/** One bound of `[start:end:step]`; `null` when not written. */
export interface SliceNode {
  kind: 'slice';
  start: number | null;
  end: number | null;
  /** `[i]` is parsed as `[i:i+1]`; `[-1]` then has end 0, which means "up to the length". */
  derivedEnd: boolean;
  step: number | null;
}

export type Node =
  | ListNode
  | SliceNode
  | { kind: 'text'; text: string }
  | { kind: 'field'; name: string }
  | { kind: 'wildcard' }
  | { kind: 'recursive' }
  | { kind: 'union'; members: ListNode[] }
  | { kind: 'filter'; left: ListNode; op: string; right: ListNode }
  | { kind: 'int'; value: number }
  | { kind: 'float'; value: number }
  | { kind: 'bool'; value: boolean }
  | { kind: 'identifier'; name: string };

function fail(message: string): never {
  throw new JsonPathError(message, 'parse');
}

const isAlphaNumeric = (ch: string): boolean => /^[\p{L}\p{Nd}_]$/u.test(ch);
const isDigit = (ch: string): boolean => /^\p{Nd}$/u.test(ch);
// Characters that end a field name or identifier (client-go's isTerminator); '' is the end of input.
const isTerminator = (ch: string): boolean => ch === '' || ' \t\r\n.,[]$@{}'.includes(ch);

/** Go's `%#U`: `U+0021 '!'`, or just `U+0009` for a character that is not printable. */
const goRune = (ch: string): string => {
  const hex = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch) ? `U+${hex} '${ch}'` : `U+${hex}`;
};

/** Parses a whole template into its root list: text nodes and one list node per action. */
export function parseTemplate(template: string): ListNode {
  const nodes: Node[] = [];
  let pos = 0;
  while (pos < template.length) {
    const open = template.indexOf('{', pos);
    if (open < 0) {
      nodes.push({ kind: 'text', text: template.slice(pos) });
      break;
    }
    if (open > pos) nodes.push({ kind: 'text', text: template.slice(pos, open) });
    const action = new ActionParser(template, open + 1);
    nodes.push(action.parse());
    pos = action.pos;
  }
  return { kind: 'list', nodes };
}

/** Union members, quoted keys and filter operands are parsed as stand-alone actions, as client-go does. */
const parseFragment = (text: string): ListNode => parseTemplate(`{${text}}`).nodes[0] as ListNode;

class ActionParser {
  private readonly list: ListNode = { kind: 'list', nodes: [] };

  constructor(
    private readonly src: string,
    public pos: number,
  ) {}

  private peek(): string {
    const cp = this.src.codePointAt(this.pos);
    return cp === undefined ? '' : String.fromCodePoint(cp);
  }

  private take(): string {
    const ch = this.peek();
    this.pos += ch.length;
    return ch;
  }

  /** Parses up to and including the closing `}`. */
  parse(): ListNode {
    for (;;) {
      if (this.src.startsWith('}', this.pos)) {
        this.pos++;
        return this.list;
      }
      if (this.src.startsWith('[?(', this.pos)) this.filter();
      else if (this.src.startsWith('..', this.pos)) this.recursive();
      else this.token();
    }
  }

  private token(): void {
    const ch = this.take();
    if (ch === '' || ch === '\r' || ch === '\n') fail('unclosed action');
    else if (ch === ' ' || ch === '@' || ch === '$')
      return; // `@` and `$` both mean "the current value"
    else if (ch === '[') this.bracket();
    else if (ch === '"' || ch === "'") this.quoted(ch);
    else if (ch === '.') this.field(this.pos);
    else if (ch === '+' || ch === '-' || isDigit(ch)) this.number(this.pos - ch.length);
    else if (isAlphaNumeric(ch)) this.identifier(this.pos - ch.length);
    else fail(`unrecognized character in action: ${goRune(ch)}`);
  }

  private identifier(start: number): void {
    while (!isTerminator(this.peek())) this.take();
    const name = this.src.slice(start, this.pos);
    const isBool = name === 'true' || name === 'false';
    this.list.nodes.push(isBool ? { kind: 'bool', value: name === 'true' } : { kind: 'identifier', name });
  }

  private number(start: number): void {
    if (this.peek() === '+' || this.peek() === '-') this.take();
    while (this.peek() === '.' || isDigit(this.peek())) this.take();
    const text = this.src.slice(start, this.pos);
    // Go's Atoi takes what fits an int64; anything else that ParseFloat takes is a float.
    if (/^[+-]?[0-9]+$/.test(text) && Math.abs(Number(text)) < 2 ** 63)
      this.list.nodes.push({ kind: 'int', value: Number(text) });
    else if (/^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)$/.test(text))
      this.list.nodes.push({ kind: 'float', value: Number(text) });
    else fail(`cannot parse number ${text}`);
  }

  private field(start: number): void {
    for (let ch = this.peek(); !isTerminator(ch); ch = this.peek()) {
      this.take();
      if (ch === '\\') this.take(); // an escaped character, e.g. the dots of `app\.kubernetes\.io/name`
    }
    const raw = this.src.slice(start, this.pos);
    this.list.nodes.push(
      raw === '*' ? { kind: 'wildcard' } : { kind: 'field', name: raw.replaceAll('\\', '') },
    );
  }

  private recursive(): void {
    if (this.list.nodes.at(-1)?.kind === 'recursive') fail('invalid multiple recursive descent');
    this.pos += 2;
    this.list.nodes.push({ kind: 'recursive' });
    if (isAlphaNumeric(this.peek())) this.field(this.pos); // `..name` needs no dot of its own
  }

  private quoted(quote: string): void {
    const start = this.pos - 1;
    for (;;) {
      const ch = this.take();
      if (ch === '' || ch === '\n') fail('unterminated quoted string');
      if (ch === quote && this.src[this.pos - 2] !== '\\') break;
    }
    const literal = this.src.slice(start, this.pos);
    const text = unquote(literal.slice(1, -1), quote);
    if (text === null) fail(`unquote string ${literal} error invalid syntax`);
    this.list.nodes.push({ kind: 'text', text });
  }

  /** `[...]`: a union `[a,b]`, a quoted key `['k']` or a slice `[i]`, `[i:j:k]`, `[*]`. */
  private bracket(): void {
    const start = this.pos;
    for (let ch = this.take(); ch !== ']'; ch = this.take()) {
      if (ch === '' || ch === '\n') fail('unterminated array');
    }
    let inner = this.src.slice(start, this.pos - 1);
    if (inner === '*') inner = ':';
    const parts = inner.split(',');
    if (parts.length > 1) {
      const members = parts.map((p) => parseFragment(`[${p.replace(/^ +| +$/g, '')}]`));
      this.list.nodes.push({ kind: 'union', members });
      return;
    }
    // kubectl reads a quoted key as a path: ['a.b'] is .a.b, and only single quotes are accepted.
    const key = /^'([^']*)'$/.exec(inner);
    if (key) {
      this.list.nodes.push(...parseFragment(`.${key[1]}`).nodes);
      return;
    }
    const m = /^(-?[0-9]*)(:-?[0-9]*)?(:-?[0-9]*)?$/.exec(inner);
    if (!m) fail(`invalid array index ${inner}`);
    const [, a = '', b = '', c = ''] = m;
    const start0 = a === '' ? null : index(a);
    const end = b === '' ? (start0 ?? 0) + 1 : b === ':' ? null : index(b.slice(1));
    const step = c === '' || c === ':' ? null : index(c.slice(1));
    this.list.nodes.push({ kind: 'slice', start: start0, end, derivedEnd: b === '', step });
  }

  /** `[?(left op right)]` or the existence test `[?(path)]`. */
  private filter(): void {
    this.pos += 3;
    const start = this.pos;
    let quote = '';
    let closed = false;
    for (;;) {
      const ch = this.take();
      if (ch === '' || ch === '\n') fail('unterminated filter');
      if (ch === '"' || ch === "'") {
        if (quote === '') quote = ch;
        else if (ch === quote && this.src[this.pos - 2] !== '\\') closed = true;
      } else if (ch === ')' && (quote !== '') === closed) break; // a `)` inside the quoted operand does not end it
    }
    if (this.take() !== ']') fail('unclosed array expect ]');
    const text = this.src.slice(start, this.pos - 2);
    const m = /^([^!<>=]+)([!<>=]+)(.+?)$/.exec(text);
    this.list.nodes.push(
      m
        ? { kind: 'filter', left: parseFragment(m[1]!), op: m[2]!, right: parseFragment(m[3]!) }
        : { kind: 'filter', left: parseFragment(text), op: 'exists', right: { kind: 'list', nodes: [] } },
    );
  }
}

const index = (text: string): number => {
  const n = Number(text);
  if (!/^-?[0-9]+$/.test(text) || Math.abs(n) > 2 ** 63 - 1) fail(`array index ${text} is not a number`);
  return n;
};

const SIMPLE_ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
};

/** Go's strconv unquoting (client-go's UnquoteExtend) of a quoted body; null on invalid syntax. */
function unquote(body: string, quote: string): string | null {
  let out = '';
  for (let i = 0; i < body.length; ) {
    const ch = String.fromCodePoint(body.codePointAt(i)!);
    if (ch === quote) return null;
    if (ch !== '\\') {
      out += ch;
      i += ch.length;
      continue;
    }
    const e = body[i + 1] ?? '';
    if (e in SIMPLE_ESCAPES) {
      out += SIMPLE_ESCAPES[e];
      i += 2;
    } else if (e === "'" || e === '"') {
      if (e !== quote) return null;
      out += e;
      i += 2;
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const len = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = body.slice(i + 2, i + 2 + len);
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) return null;
      const cp = Number.parseInt(hex, 16);
      if (e !== 'x' && (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))) return null;
      out += String.fromCodePoint(cp);
      i += 2 + len;
    } else if (/^[0-7]{3}$/.test(body.slice(i + 1, i + 4))) {
      const cp = Number.parseInt(body.slice(i + 1, i + 4), 8);
      if (cp > 255) return null;
      out += String.fromCodePoint(cp);
      i += 4;
    } else return null;
  }
  return out;
}
