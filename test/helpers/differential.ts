// The differential suite's machinery: one client for Outpost and for the real kube-apiserver,
// watches read event by event, the shape comparison of two answers and the accepted differences,
// read from docs/compatibility.md (the single list of them).
// biome-ignore-all lint/suspicious/noExplicitAny: answers are compared as loose JSON.
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';

export interface Answer {
  status: number;
  body: any;
}

export interface Target {
  name: 'outpost' | 'kube-apiserver';
  request(
    method: string,
    path: string,
    opts?: { body?: unknown; type?: string; accept?: string },
  ): Promise<Answer>;
  /** Opens a watch; `events` fills as lines arrive. */
  watch(path: string): Promise<Watch>;
}

export interface Watch {
  status: number;
  /** A refused watch's answer (a Status), once read. */
  body?: any;
  events: { type: string; object: any }[];
  close(): void;
}

/**
 * A target over HTTP with a bearer token (Outpost, its admin) or HTTPS with a client certificate
 * (the lab's admin).
 */
export function target(
  name: Target['name'],
  base: string,
  tls?: { ca: Buffer; cert: Buffer; key: Buffer },
  admin: Record<string, string> = {},
): Target {
  const url = new URL(base);
  const open = (method: string, path: string, given: Record<string, string>, body?: string) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const headers = { ...given, ...admin };
      const opts = { host: url.hostname, port: url.port, path, method, headers, timeout: 120_000, ...tls };
      const req = (tls ? httpsRequest : httpRequest)(opts, resolve);
      req.on('error', reject);
      req.on('timeout', () => req.destroy(new Error(`${name} ${method} ${path}: no answer within 120 s`)));
      req.end(body);
    });
  return {
    name,
    async request(method, path, o = {}) {
      const headers: Record<string, string> = { accept: o.accept ?? 'application/json' };
      let body: string | undefined;
      if (o.body !== undefined) {
        body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
        headers['content-type'] = o.type ?? 'application/json';
      }
      const res = await open(method, path, headers, body);
      let text = '';
      for await (const chunk of res) text += chunk;
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {}
      return { status: res.statusCode ?? 0, body: parsed };
    },
    async watch(path) {
      const res = await open('GET', path, { accept: 'application/json' });
      const events: Watch['events'] = [];
      let rest = '';
      res.setEncoding('utf8');
      const w: Watch = { status: res.statusCode ?? 0, events, close: () => res.destroy() };
      if (w.status !== 200) {
        for await (const chunk of res) rest += chunk;
        try {
          w.body = JSON.parse(rest);
        } catch {
          w.body = rest;
        }
        return w;
      }
      res.on('data', (d: string) => {
        rest += d;
        const lines = rest.split('\n');
        rest = lines.pop() ?? '';
        for (const l of lines) if (l.trim()) events.push(JSON.parse(l));
      });
      res.on('error', () => {});
      return w;
    },
  };
}

/** Keys whose values are compared, not only their types: what a client branches on. */
const VALUE_KEYS = new Set(['kind', 'apiVersion', 'reason', 'code', 'status', 'type']);

/**
 * Differences in shape between two answers: types, keys present, array lengths, the values of
 * VALUE_KEYS and of arrays of scalars (verbs, names); not other values (uids, times, versions).
 * Paths use `[]` for any array index. `fieldsV1` (managedFields' field sets) is compared by type.
 */
export function shapeDiff(a: unknown, b: unknown, path = ''): string[] {
  const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  const [ka, kb] = [kind(a), kind(b)];
  if (ka !== kb) return [`${path}: ${ka} vs ${kb}`];
  const key = path.split('.').at(-1) ?? '';
  if (key === 'fieldsV1') return [];
  if (ka === 'array') {
    const [xa, xb] = [a as unknown[], b as unknown[]];
    if (xa.every((x) => typeof x !== 'object') && xb.every((x) => typeof x !== 'object')) {
      const [sa, sb] = [JSON.stringify([...xa].sort()), JSON.stringify([...xb].sort())];
      return sa === sb ? [] : [`${path}: ${sa} vs ${sb}`];
    }
    const out = xa.length === xb.length ? [] : [`${path}: length ${xa.length} vs ${xb.length}`];
    for (let i = 0; i < Math.min(xa.length, xb.length); i++)
      out.push(...shapeDiff(xa[i], xb[i], `${path}[]`));
    return [...new Set(out)];
  }
  if (ka === 'object') {
    const [oa, ob] = [a as Record<string, unknown>, b as Record<string, unknown>];
    const out: string[] = [];
    for (const k of new Set([...Object.keys(oa), ...Object.keys(ob)])) {
      const p = path ? `${path}.${k}` : k;
      if (!(k in oa)) out.push(`${p}: missing in Outpost`);
      else if (!(k in ob)) out.push(`${p}: only in Outpost`);
      else out.push(...shapeDiff(oa[k], ob[k], p));
    }
    return out;
  }
  if (VALUE_KEYS.has(key) && a !== b) return [`${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`];
  return [];
}

export interface Accepted {
  case: string;
  path: string;
  why: string;
}

/**
 * The accepted differences: the rows of the table under "## Differential suite" in
 * docs/compatibility.md, `| \`case\` | \`path\` | why |`. A row accepts any difference at its path
 * or below, the path read from the answer's root or from any key on (`generation` covers
 * `create.body.metadata.generation`; `*`: any path), in its case (`*`: every case).
 */
export function acceptedDifferences(): Accepted[] {
  const doc = readFileSync(join(import.meta.dirname, '../../docs/compatibility.md'), 'utf8');
  const section = doc.split(/^## Differential suite/m)[1] ?? '';
  const rows: Accepted[] = [];
  for (const line of section.split('\n')) {
    const m = /^\| `([^`]+)` \| `([^`]+)` \| (.+) \|$/.exec(line.trim());
    if (m) rows.push({ case: m[1]!, path: m[2]!, why: m[3]!.trim() });
  }
  return rows;
}

/** Whether `path` is `row` or below it, `row` matching the whole path or its end (from a key on). */
function covers(row: string, path: string): boolean {
  if (row === '*') return true;
  const tails = [path, ...[...path.matchAll(/\./g)].map((m) => path.slice(m.index + 1))];
  return tails.some((t) => t === row || t.startsWith(`${row}.`) || t.startsWith(`${row}[]`));
}

/** The differences no accepted row covers. */
export function unexplained(caseName: string, diffs: string[], accepted: Accepted[]): string[] {
  return diffs.filter((d) => {
    const path = d.slice(0, d.indexOf(': '));
    return !accepted.some((a) => (a.case === '*' || a.case === caseName) && covers(a.path, path));
  });
}
