// Field selectors as the kube-apiserver handles `?fieldSelector=`: apimachinery `fields.ParseSelector` for the
// syntax, then the kind's field label conversion, which rejects any field the kind does not index.
import { badRequest } from './status.ts';

/** How to read each selectable field from a stored object; a missing value compares as ''. */
// biome-ignore lint/suspicious/noExplicitAny: extractors read loose stored objects.
export type FieldExtractors = Readonly<Record<string, (obj: any) => string | undefined>>;

export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '==' | '!=';
  /** Unescaped. */
  readonly value: string;
}

export interface FieldSelector {
  readonly empty: boolean;
  /** In upstream's order: terms sorted as written. */
  readonly requirements: readonly FieldRequirement[];
  matches(obj: unknown): boolean;
  toString(): string;
}

// Pod fields the apiserver indexes (pkg/registry/core/pod ToSelectableFields).
export const podFieldSelectorFields: FieldExtractors = {
  'metadata.name': (p) => p?.metadata?.name,
  'metadata.namespace': (p) => p?.metadata?.namespace,
  'spec.nodeName': (p) => p?.spec?.nodeName,
  'spec.restartPolicy': (p) => p?.spec?.restartPolicy,
  'spec.schedulerName': (p) => p?.spec?.schedulerName,
  'spec.serviceAccountName': (p) => p?.spec?.serviceAccountName,
  'spec.hostNetwork': (p) => String(p?.spec?.hostNetwork === true),
  'status.phase': (p) => p?.status?.phase,
  // Upstream reads the first of podIPs, which mirrors podIP.
  'status.podIP': (p) => p?.status?.podIPs?.[0]?.ip ?? p?.status?.podIP,
  'status.nominatedNodeName': (p) => p?.status?.nominatedNodeName,
};

// Event fields the apiserver indexes (pkg/registry/core/event ToSelectableFields).
export const eventFieldSelectorFields: FieldExtractors = {
  'metadata.name': (e) => e?.metadata?.name,
  'metadata.namespace': (e) => e?.metadata?.namespace,
  'involvedObject.kind': (e) => e?.involvedObject?.kind,
  'involvedObject.namespace': (e) => e?.involvedObject?.namespace,
  'involvedObject.name': (e) => e?.involvedObject?.name,
  'involvedObject.uid': (e) => e?.involvedObject?.uid,
  'involvedObject.apiVersion': (e) => e?.involvedObject?.apiVersion,
  'involvedObject.resourceVersion': (e) => e?.involvedObject?.resourceVersion,
  'involvedObject.fieldPath': (e) => e?.involvedObject?.fieldPath,
  reason: (e) => e?.reason,
  reportingComponent: (e) => e?.reportingController,
  // The core/v1 `source` is source.component, falling back to the events.k8s.io reportingController.
  source: (e) => e?.source?.component || e?.reportingController,
  type: (e) => e?.type,
};

// Field labels a kind renames before matching (pkg/apis/core/v1 conversion: old clients send spec.host),
// by kind or resource name in lower case and singular.
const legacyLabels: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  pod: { 'spec.host': 'spec.nodeName' },
};
const singular = (kind: string): string => kind.toLowerCase().replace(/s$/, '');

// Splits on commas that are not backslash-escaped; escapes stay in the terms.
function splitTerms(s: string): string[] {
  const terms: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < s.length; i++) {
    if (escaped) escaped = false;
    else if (s[i] === '\\') escaped = true;
    else if (s[i] === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

// The first operator wins; at one position `!=` and `==` are tried before `=`.
function splitTerm(term: string): FieldRequirement | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const operator of ['!=', '==', '='] as const) {
      if (term.startsWith(operator, i)) {
        return { field: term.slice(0, i), operator, value: term.slice(i + operator.length) };
      }
    }
  }
  return undefined;
}

function unescapeValue(value: string): string {
  let out = '';
  let escaped = false;
  for (const c of value) {
    if (escaped) {
      if (c !== '\\' && c !== ',' && c !== '=') {
        throw badRequest(`invalid field selector: invalid escape sequence: \\${c}`);
      }
      out += c;
      escaped = false;
    } else if (c === '\\') escaped = true;
    else if (c === ',' || c === '=') {
      // Upstream formats the rune with %v, which prints its code point.
      throw badRequest(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else out += c;
  }
  if (escaped) throw badRequest('invalid field selector: invalid escape sequence: \\');
  return out;
}

const escapeValue = (v: string): string => v.replace(/[\\,=]/g, (c) => `\\${c}`);

/**
 * Parses a field selector for `kind` (`Pod` or `pods`), accepting only the fields in `fields` (after the kind's
 * legacy renames); throws 400 BadRequest Statuses worded as the apiserver words them.
 */
export function parseFieldSelector(s: string, fields: FieldExtractors, kind: string): FieldSelector {
  const requirements: FieldRequirement[] = [];
  for (const term of splitTerms(s).sort()) {
    if (term === '') continue;
    const req = splitTerm(term);
    if (!req) throw badRequest(`invalid selector: '${s}'; can't understand '${term}'`);
    requirements.push({ ...req, value: unescapeValue(req.value) });
  }
  // Kinds without their own conversion only index metadata, and the apiserver says so differently.
  const metadataOnly = Object.keys(fields).every((f) => f === 'metadata.name' || f === 'metadata.namespace');
  const converted = requirements.map((r) => {
    const field = legacyLabels[singular(kind)]?.[r.field] ?? r.field;
    if (Object.hasOwn(fields, field)) return { ...r, field };
    throw badRequest(
      metadataOnly
        ? `"${r.field}" is not a known field selector: only "metadata.name", "metadata.namespace"`
        : `field label not supported: ${r.field}`,
    );
  });
  return {
    empty: converted.length === 0,
    requirements: converted,
    matches: (obj) =>
      converted.every((r) => {
        const actual = fields[r.field]?.(obj) ?? '';
        return r.operator === '!=' ? actual !== r.value : actual === r.value;
      }),
    // Upstream prints `==` terms as `=`.
    toString: () =>
      converted.map((r) => `${r.field}${r.operator === '!=' ? '!=' : '='}${escapeValue(r.value)}`).join(','),
  };
}

/** The `=`/`==` terms by field, so a store can filter on them before matching (e.g. in SQL). */
export function requiredEquals(selector: FieldSelector): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of selector.requirements) if (r.operator !== '!=') out.set(r.field, r.value);
  return out;
}
