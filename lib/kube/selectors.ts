// Label selectors as the kube-apiserver parses `?labelSelector=` (apimachinery `labels.Parse`): same grammar,
// same canonical ordering, and the same error texts, so kubectl prints what it would print against a cluster.
import { labelKeyErrors, labelValueErrors } from './label-syntax.ts';
import { badRequest } from './status.ts';

export type { FieldExtractors, FieldRequirement, FieldSelector } from './field-selector.ts';
export {
  eventFieldSelectorFields,
  parseFieldSelector,
  podFieldSelectorFields,
  requiredEquals,
} from './field-selector.ts';

/** apimachinery `selection.Operator` values. */
export type LabelOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  /** Sorted and de-duplicated, as upstream keeps them. */
  readonly values: readonly string[];
}

export interface LabelSelector {
  /** True when the selector restricts nothing (the empty string). */
  readonly empty: boolean;
  /** Sorted by key, as upstream sorts them. */
  readonly requirements: readonly LabelRequirement[];
  matches(labels: Record<string, string> | undefined): boolean;
  /** The canonical form, e.g. `app in (a,b),!tier`. */
  toString(): string;
}

type Tok = 'error' | 'eos' | 'id' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<' | 'in' | 'notin';
interface Item {
  tok: Tok;
  lit: string;
}

const literalTokens: Readonly<Record<string, Tok>> = {
  '(': '(',
  ')': ')',
  ',': ',',
  '!': '!',
  '=': '=',
  '==': '==',
  '!=': '!=',
  '>': '>',
  '<': '<',
  in: 'in',
  notin: 'notin',
};
const isSpecial = (c: string | undefined): boolean => c !== undefined && '=!(),><'.includes(c);
const isSpace = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';

// Upstream's lexer reads a NUL byte as end of input: at the start of a token it ends the selector, inside
// one it ends the token and is skipped. Operators are the longest run of special characters that is a token.
function lex(s: string): Item[] {
  const items: Item[] = [];
  let pos = 0;
  for (;;) {
    while (isSpace(s[pos])) pos++;
    if (pos >= s.length || s[pos] === '\0') {
      items.push({ tok: 'eos', lit: '' });
      return items;
    }
    let buf = '';
    if (isSpecial(s[pos])) {
      let item: Item | undefined;
      while (isSpecial(s[pos])) {
        const tok = literalTokens[buf + s[pos]];
        if (!tok && item) break;
        buf += s[pos++];
        if (tok) item = { tok, lit: buf };
      }
      if (s[pos] === '\0') pos++;
      items.push(item ?? { tok: 'error', lit: `error expected: keyword found '${buf}'` });
    } else {
      while (pos < s.length && !isSpecial(s[pos]) && !isSpace(s[pos]) && s[pos] !== '\0') buf += s[pos++];
      if (s[pos] === '\0') pos++;
      items.push({ tok: literalTokens[buf] ?? 'id', lit: buf });
    }
  }
}

const binaryOperators: Partial<Record<Tok, LabelOperator>> = {
  in: 'in',
  notin: 'notin',
  '=': '=',
  '==': '==',
  '!=': '!=',
  '>': 'gt',
  '<': 'lt',
};

class Parser {
  private pos = 0;
  constructor(private readonly items: Item[]) {}

  // In value position `in` and `notin` are plain identifiers (`x in (in)` is legal).
  peek(values = true): Item {
    const item = this.items[Math.min(this.pos, this.items.length - 1)]!;
    return values && (item.tok === 'in' || item.tok === 'notin') ? { tok: 'id', lit: item.lit } : item;
  }

  next(values = true): Item {
    const item = this.peek(values);
    this.pos++;
    return item;
  }

  selector(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const head = this.peek();
      if (head.tok === 'eos') return reqs;
      if (head.tok !== 'id' && head.tok !== '!') {
        throw new Error(`found '${head.lit}', expected: !, identifier, or 'end of string'`);
      }
      try {
        reqs.push(this.requirement());
      } catch (e) {
        throw new Error(`unable to parse requirement: ${(e as Error).message}`);
      }
      const sep = this.next();
      if (sep.tok === 'eos') return reqs;
      if (sep.tok !== ',') throw new Error(`found '${sep.lit}', expected: ',' or 'end of string'`);
      const after = this.peek();
      if (after.tok !== 'id' && after.tok !== '!') {
        throw new Error(`found '${after.lit}', expected: identifier after ','`);
      }
    }
  }

  private requirement(): LabelRequirement {
    let t = this.next();
    const negated = t.tok === '!';
    if (negated) t = this.next();
    if (t.tok !== 'id') throw new Error(`found '${t.lit}', expected: identifier`);
    const key = t.lit;
    const keyErrs = labelKeyErrors(key);
    // Upstream validates the key against a nil field path, hence `<nil>`.
    if (keyErrs.length > 0)
      throw new Error(`<nil>: Invalid value: ${JSON.stringify(key)}: ${keyErrs.join('; ')}`);
    const after = this.peek().tok;
    if (after === 'eos' || after === ',') return { key, operator: negated ? '!' : 'exists', values: [] };
    if (negated) throw new Error(`found '${key}', expected: ',' or 'end of string'`);
    const opItem = this.next(false);
    const operator = binaryOperators[opItem.tok];
    if (!operator) throw new Error(`found '${opItem.lit}', expected: in, notin, =, ==, !=, gt, lt`);
    const values = operator === 'in' || operator === 'notin' ? this.valueSet() : this.exactValue();
    return validated(key, operator, [...new Set(values)].sort());
  }

  private valueSet(): string[] {
    const open = this.next();
    if (open.tok !== '(') throw new Error(`found '${open.lit}' expected: '('`);
    const first = this.peek();
    if (first.tok === ')') {
      this.next();
      return [''];
    }
    if (first.tok !== 'id' && first.tok !== ',') {
      throw new Error(`found '${first.lit}', expected: ',', ')' or identifier`);
    }
    // Empty members are legal: `(a,)`, `(,a)` and `(a,,b)` all contain ''.
    const values: string[] = [];
    for (;;) {
      const t = this.next();
      if (t.tok === 'id') {
        values.push(t.lit);
        const la = this.peek();
        if (la.tok === ')') break;
        if (la.tok !== ',') throw new Error(`found '${la.lit}', expected: ',' or ')'`);
      } else if (t.tok === ',') {
        if (values.length === 0) values.push('');
        const la = this.peek().tok;
        if (la === ')') {
          values.push('');
          break;
        }
        if (la === ',') {
          this.next();
          values.push('');
        }
      } else {
        throw new Error(`found '${t.lit}', expected: ',', or identifier`);
      }
    }
    this.next(); // the ')'
    return values;
  }

  private exactValue(): string[] {
    const la = this.peek().tok;
    if (la === 'eos' || la === ',') return [''];
    const t = this.next();
    if (t.tok !== 'id') throw new Error(`found '${t.lit}', expected: identifier`);
    return [t.lit];
  }
}

const int64 = (s: string): bigint | undefined => {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
};

// apimachinery NewRequirement's value checks; several failures are reported as `[a, b]`.
function validated(key: string, operator: LabelOperator, values: string[]): LabelRequirement {
  const errs: string[] = [];
  values.forEach((v, i) => {
    if ((operator === 'gt' || operator === 'lt') && int64(v) === undefined) {
      errs.push(
        `values[${i}]: Invalid value: ${JSON.stringify(v)}: for 'Gt', 'Lt' operators, the value must be an integer`,
      );
    }
  });
  values.forEach((v, i) => {
    const valueErrs = labelValueErrors(v);
    if (valueErrs.length > 0) {
      errs.push(`values[${i}][${key}]: Invalid value: ${JSON.stringify(v)}: ${valueErrs.join('; ')}`);
    }
  });
  const unique = [...new Set(errs)];
  if (unique.length === 1) throw new Error(unique[0]);
  if (unique.length > 1) throw new Error(`[${unique.join(', ')}]`);
  return { key, operator, values };
}

function requirementMatches(r: LabelRequirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const value = labels[r.key] ?? '';
  switch (r.operator) {
    case '=':
    case '==':
    case 'in':
      return has && r.values.includes(value);
    case '!=':
    case 'notin':
      return !has || !r.values.includes(value);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      const actual = has ? int64(value) : undefined;
      const bound = int64(r.values[0] ?? '');
      if (actual === undefined || bound === undefined) return false;
      return r.operator === 'gt' ? actual > bound : actual < bound;
    }
  }
}

const opText: Record<LabelOperator, string> = {
  '=': '=',
  '==': '==',
  '!=': '!=',
  in: ' in ',
  notin: ' notin ',
  gt: '>',
  lt: '<',
  exists: '',
  '!': '',
};

function requirementString(r: LabelRequirement): string {
  if (r.operator === 'exists') return r.key;
  if (r.operator === '!') return `!${r.key}`;
  const values = r.values.join(',');
  const set = r.operator === 'in' || r.operator === 'notin';
  return `${r.key}${opText[r.operator]}${set ? `(${values})` : values}`;
}

/** Parses a label selector; throws a 400 BadRequest Status with apimachinery's message when it is malformed. */
export function parseLabelSelector(s: string): LabelSelector {
  let requirements: LabelRequirement[];
  try {
    requirements = new Parser(lex(s)).selector();
  } catch (e) {
    throw badRequest((e as Error).message);
  }
  requirements.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return {
    empty: requirements.length === 0,
    requirements,
    matches: (labels) => requirements.every((r) => requirementMatches(r, labels ?? {})),
    toString: () => requirements.map(requirementString).join(','),
  };
}
