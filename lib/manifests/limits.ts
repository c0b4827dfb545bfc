// What one manifest file may cost, checked before the YAML is parsed, so a hostile or mistaken
// file is that file's error and never the agent's memory. The figures follow the API server's:
// a request body at most 3 MiB (genericapiserver's MaxRequestBodyBytes), an object at most 1 MiB
// (the size ConfigMap and Secret data are validated against; etcd's value limit is 1.5 MiB).

export const MANIFEST_LIMITS = {
  /** A manifest file, checked with stat before it is read. */
  fileBytes: 3 * 1024 * 1024,
  /** One YAML document (an object or a List) before parsing, and one object as JSON after. */
  objectBytes: 1024 * 1024,
  /** Objects in one file (List items count one each). */
  objects: 1000,
  /**
   * YAML nodes in one file (scalars, collections, aliases), counted by the lexer before anything is
   * built: the parser's syntax tree costs ~300 bytes a node, so this bounds a file's peak memory.
   */
  nodes: 50_000,
  /** Alias expansions per document relative to its size (the yaml library's guard against alias bombs). */
  aliases: 100,
} as const;

export const MiB = (n: number) => `${(n / 1024 / 1024).toFixed(n % (1024 * 1024) ? 1 : 0)} MiB`;

/**
 * Why `text` is too big to parse (documents, document size or nodes), or undefined, counted from the
 * YAML lexer's `tokens` of it (`new Lexer().lex(text)`); costs no syntax tree.
 */
export function manifestTextProblem(
  text: string,
  tokens: Iterable<string>,
): { message: string; line: number } | undefined {
  let offset = 0;
  let docStart = 0;
  let docs = 0;
  let nodes = 0;
  const tooBig = (end: number) =>
    end - docStart > MANIFEST_LIMITS.objectBytes
      ? {
          line: lineAt(text, docStart),
          message: `a document is ${MiB(end - docStart)} of YAML, more than the ${MiB(MANIFEST_LIMITS.objectBytes)} an object may have`,
        }
      : undefined;
  let docNodes = 0;
  for (const token of tokens) {
    switch (token[0]) {
      case '-':
        if (token === '---') {
          // `---` starts a document; the one before it ends here.
          const big = tooBig(offset);
          if (big) return big;
          if (docNodes > 0) docs++;
          docNodes = 0;
          docStart = offset;
        } else if (token === '-') {
          docNodes++; // a sequence item
          nodes++;
        }
        break;
      case '\x1f': // the next token is a scalar
      case '{':
      case '[':
      case '*':
      case '|':
      case '>':
        docNodes++;
        nodes++;
        break;
    }
    if (docs + (docNodes > 0 ? 1 : 0) > MANIFEST_LIMITS.objects)
      return {
        line: lineAt(text, offset),
        message: `more than ${MANIFEST_LIMITS.objects} documents in one file`,
      };
    if (nodes > MANIFEST_LIMITS.nodes)
      return {
        line: lineAt(text, offset),
        message: `more than ${MANIFEST_LIMITS.nodes} YAML nodes in one file`,
      };
    // The lexer's control characters (document start, scalar, flow error) are not part of the text.
    if (token !== '\x02' && token !== '\x18' && token !== '\x1f') offset += token.length;
  }
  return tooBig(text.length);
}

/** The JSON size of `value` if it is at most `limit` bytes, else undefined; stops counting past the limit. */
export function jsonSizeWithin(value: unknown, limit: number): number | undefined {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') size += v.length + 2;
    else if (Array.isArray(v)) {
      size += 2 + v.length;
      for (const item of v) stack.push(item);
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      size += 2 + entries.length;
      for (const [k, item] of entries) {
        size += k.length + 3;
        stack.push(item);
      }
    } else size += String(v).length;
    if (size > limit) return undefined;
  }
  return size;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}
