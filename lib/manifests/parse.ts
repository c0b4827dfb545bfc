import type { KubeObject } from '#lib/kube/types.ts';
import { jsonSizeWithin, MANIFEST_LIMITS, MiB, manifestTextProblem } from './limits.ts';

export interface ManifestProblem {
  file: string;
  line?: number;
  message: string;
}

export interface ParsedObject {
  object: KubeObject;
  line: number;
}

/**
 * Parses a YAML (multi-document) or JSON manifest, flattening `kind: List` and `*List` kinds.
 * A file over the limits (MANIFEST_LIMITS) is refused before any syntax tree is built; documents are
 * then composed one at a time, so only one document's tree is ever held. The YAML parser is loaded
 * the first time a file is not plain JSON.
 */
export async function parseManifest(
  file: string,
  text: string,
): Promise<{ objects: ParsedObject[]; problems: ManifestProblem[] }> {
  const objects: ParsedObject[] = [];
  const problems: ManifestProblem[] = [];
  // A JSON document (what tools write, and a node's manifests at recovery) is read by JSON.parse,
  // several times faster than the YAML parser and its lexer's size checks: only when those checks
  // could not object (one document within the size of an object, no more nodes than a file may
  // have) and the YAML parser would read it the same (no repeated key). Anything else goes the
  // YAML way below, with its problems and messages.
  const json = text.length <= MANIFEST_LIMITS.objectBytes ? asJson(text) : undefined;
  if (json) {
    flatten(json.value, file, json.line, objects, problems);
    if (objects.length > MANIFEST_LIMITS.objects) {
      return {
        objects: [],
        problems: [
          { file, line: json.line, message: `more than ${MANIFEST_LIMITS.objects} objects in one file` },
        ],
      };
    }
    return { objects, problems };
  }
  const { Composer, Lexer, LineCounter, Parser } = await import('#lib/kube/yaml.ts');
  const tooBig = manifestTextProblem(text, new Lexer().lex(text));
  if (tooBig) return { objects, problems: [{ file, ...tooBig }] };
  const lines = new LineCounter();
  const composer = new Composer({ uniqueKeys: true });
  const docs = composer.compose(new Parser(lines.addNewLine).parse(text));
  for (const doc of docs) {
    const line = lines.linePos(doc.contents?.range[0] ?? doc.range[0]).line;
    if (doc.errors.length) {
      for (const err of doc.errors) {
        problems.push({ file, line: err.linePos?.[0].line ?? line, message: err.message.split('\n')[0]! });
      }
      continue;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MANIFEST_LIMITS.aliases });
    } catch (e) {
      // The yaml library's alias-bomb guard: "Excessive alias count indicates a resource exhaustion attack".
      problems.push({ file, line, message: (e as Error).message });
      continue;
    }
    if (value === null || value === undefined) continue; // an empty document, e.g. a trailing `---`
    flatten(value, file, line, objects, problems);
    if (objects.length > MANIFEST_LIMITS.objects) {
      return {
        objects: [],
        problems: [{ file, line, message: `more than ${MANIFEST_LIMITS.objects} objects in one file` }],
      };
    }
  }
  return { objects, problems };
}

/**
 * The text as one JSON object or array, with the line it starts on; undefined when it is not
 * valid JSON, names a key twice in one object (the YAML parser refuses that, JSON.parse keeps the
 * last) or has more nodes than MANIFEST_LIMITS allows.
 */
function asJson(text: string): { value: unknown; line: number } | undefined {
  const start = text.search(/\S/);
  if (start < 0 || (text[start] !== '{' && text[start] !== '[')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  // Every key in the text is one ':' outside a string; the parsed value has as many unless a key repeats.
  let colons = 0;
  for (let i = start; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 0x3a) colons++;
    else if (ch === 0x22) {
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    }
  }
  const count = { keys: 0, nodes: 0 };
  countNodes(value, count);
  if (count.keys !== colons || count.nodes > MANIFEST_LIMITS.nodes) return undefined;
  let line = 1;
  for (let i = 0; i < start; i++) if (text.charCodeAt(i) === 0x0a) line++;
  return { value, line };
}

/** Keys, and nodes as the YAML lexer counts them (collections, keys, scalar values). */
function countNodes(value: unknown, count: { keys: number; nodes: number }): void {
  count.nodes++;
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    for (const v of value) countNodes(v, count);
    return;
  }
  for (const k in value) {
    count.keys++;
    count.nodes++;
    countNodes((value as Record<string, unknown>)[k], count);
  }
}

function flatten(
  value: unknown,
  file: string,
  line: number,
  out: ParsedObject[],
  problems: ManifestProblem[],
): void {
  if (typeof value !== 'object' || Array.isArray(value) || value === null) {
    problems.push({ file, line, message: 'a manifest document must be an object with apiVersion and kind' });
    return;
  }
  const obj = value as Record<string, unknown>;
  if (typeof obj.kind !== 'string' || obj.kind === '') {
    problems.push({ file, line, message: "Object 'Kind' is missing" });
    return;
  }
  if (obj.kind === 'List' || obj.kind.endsWith('List')) {
    if (!Array.isArray(obj.items)) {
      problems.push({ file, line, message: `${obj.kind} has no items array` });
      return;
    }
    const itemKind = obj.kind === 'List' ? undefined : obj.kind.slice(0, -'List'.length);
    for (const item of obj.items) {
      const withKind =
        itemKind && item && typeof item === 'object' && !('kind' in item)
          ? { kind: itemKind, ...item }
          : item;
      flatten(withKind, file, line, out, problems);
    }
    return;
  }
  const metadata = obj.metadata as Record<string, unknown> | null | undefined;
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
    problems.push({ file, line, message: `${obj.kind}: metadata is required` });
    return;
  }
  if (typeof metadata.name !== 'string' || metadata.name === '') {
    problems.push({ file, line, message: `${obj.kind}: metadata.name is required` });
    return;
  }
  if (metadata.namespace !== undefined && typeof metadata.namespace !== 'string') {
    problems.push({
      file,
      line,
      message: `${obj.kind} "${metadata.name}": metadata.namespace must be a string`,
    });
    return;
  }
  // Aliases can make an object far bigger than its text; the size is counted, never serialized.
  if (jsonSizeWithin(obj, MANIFEST_LIMITS.objectBytes) === undefined) {
    problems.push({
      file,
      line,
      message: `${obj.kind} "${metadata.name}" is more than ${MiB(MANIFEST_LIMITS.objectBytes)} as JSON`,
    });
    return;
  }
  out.push({ object: obj as KubeObject, line });
}
