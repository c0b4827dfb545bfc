import { LineCounter, parseAllDocuments } from 'yaml';
import type { KubeObject } from '#lib/kube/types.ts';

export interface ManifestProblem {
  file: string;
  line?: number;
  message: string;
}

export interface ParsedObject {
  object: KubeObject;
  line: number;
}

/** Parses a YAML (multi-document) or JSON manifest, flattening `kind: List` and `*List` kinds. */
export function parseManifest(
  file: string,
  text: string,
): { objects: ParsedObject[]; problems: ManifestProblem[] } {
  const objects: ParsedObject[] = [];
  const problems: ManifestProblem[] = [];
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lines, uniqueKeys: true });
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    const line = lines.linePos(doc.contents?.range[0] ?? doc.range[0]).line;
    if (doc.errors.length) {
      for (const err of doc.errors) {
        problems.push({ file, line: err.linePos?.[0].line ?? line, message: err.message.split('\n')[0]! });
      }
      continue;
    }
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value === null || value === undefined) continue; // an empty document, e.g. a trailing `---`
    flatten(value, file, line, objects, problems);
  }
  return { objects, problems };
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
  if (typeof obj.metadata !== 'object' || obj.metadata === null || Array.isArray(obj.metadata)) {
    problems.push({ file, line, message: `${obj.kind}: metadata is required` });
    return;
  }
  out.push({ object: obj as KubeObject, line });
}
