// What the fleet bench reads from the API server: its audit log (which request came from which
// node identity) and its /metrics (request totals, watch gauges).
import { closeSync, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseRequestTotals } from '../../scripts/cloud/plane.ts';

/** kube-apiserver flags that write an audit record (Metadata level) of every node's request to `dir`. */
export function auditFlags(dir: string): string[] {
  const policy = join(dir, 'audit-policy.yaml');
  writeFileSync(
    policy,
    `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    userGroups: ["system:nodes"]
  - level: None
`,
  );
  return [
    `--audit-policy-file=${policy}`,
    `--audit-log-path=${join(dir, 'audit.log')}`,
    '--audit-log-mode=batch',
    '--audit-log-batch-max-wait=1s',
  ];
}

/** One request of a node, as the audit log shows it. */
export interface NodeRequest {
  /** Milliseconds since the epoch the API server received it. */
  t: number;
  node: string;
  /** `verb resource[/subresource]`, verbs as apiserver_request_total spells them (`LIST`, `WATCH`). */
  key: string;
  verb: string;
  code: number;
}

/** Reads the audit records appended since the last read (a watch is counted when it starts). */
export class AuditReader {
  private offset = 0;
  private rest = '';
  readonly requests: NodeRequest[] = [];
  constructor(readonly path: string) {}

  read(): NodeRequest[] {
    const size = statSync(this.path, { throwIfNoEntry: false })?.size ?? 0;
    if (size <= this.offset) return this.requests;
    const fd = openSync(this.path, 'r');
    const buf = Buffer.alloc(size - this.offset);
    readSync(fd, buf, 0, buf.length, this.offset);
    closeSync(fd);
    this.offset = size;
    const lines = (this.rest + buf.toString('utf8')).split('\n');
    this.rest = lines.pop() ?? '';
    for (const line of lines) {
      if (!line) continue;
      const e = JSON.parse(line) as {
        stage: string;
        verb: string;
        user?: { username?: string };
        objectRef?: { resource?: string; subresource?: string };
        responseStatus?: { code?: number };
        requestReceivedTimestamp: string;
      };
      const node = e.user?.username?.replace(/^system:node:/, '');
      if (!node || node === e.user?.username) continue;
      if (e.verb === 'watch' ? e.stage !== 'ResponseStarted' : e.stage !== 'ResponseComplete') continue;
      const verb = e.verb === 'create' ? 'POST' : e.verb === 'update' ? 'PUT' : e.verb.toUpperCase();
      const r = e.objectRef;
      const key = `${verb} ${r?.resource ?? '(non-resource)'}${r?.subresource ? `/${r.subresource}` : ''}`;
      const t = Date.parse(e.requestReceivedTimestamp);
      this.requests.push({ t, node, key, verb, code: e.responseStatus?.code ?? 0 });
    }
    return this.requests;
  }

  /** The node requests received in [from, to). */
  between(from: number, to: number): NodeRequest[] {
    return this.read().filter((r) => r.t >= from && r.t < to);
  }
}

/** Counts of items by a key. */
export function countBy<T>(xs: T[], key: (x: T) => string): Map<string, number> {
  const out = new Map<string, number>();
  for (const x of xs) out.set(key(x), (out.get(key(x)) ?? 0) + 1);
  return out;
}

/** One scrape of the API server's /metrics: request totals and open watches by resource. */
export interface Scrape {
  at: number;
  totals: Map<string, number>;
  watches: Map<string, number>;
}

/**
 * Open watches by resource from `apiserver_longrunning_gauge`: verb WATCH, and verb GET without a
 * subresource, which is how the API server files a watch of one object by name
 * (`fieldSelector=metadata.name=X`, a node's own Node or a ConfigMap its pods use).
 */
export function parseWatchGauge(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_longrunning_gauge{')) continue;
    const watch =
      line.includes('verb="WATCH"') || (line.includes('verb="GET"') && line.includes('subresource=""'));
    if (!watch) continue;
    const resource = /resource="([^"]*)"/.exec(line)?.[1] ?? '';
    out.set(resource, (out.get(resource) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

export async function scrape(
  adminGet: (path: string) => Promise<{ status: number; body: string }>,
): Promise<Scrape> {
  const r = await adminGet('/metrics');
  if (r.status !== 200) throw new Error(`kube-apiserver /metrics: HTTP ${r.status}`);
  return { at: Date.now(), totals: parseRequestTotals(r.body), watches: parseWatchGauge(r.body) };
}

/** Per-minute request rates by key between two scrapes (non-resource requests, /metrics itself, apart). */
export function ratePerMinute(a: Scrape, b: Scrape): Map<string, number> {
  const minutes = (b.at - a.at) / 60_000;
  const out = new Map<string, number>();
  for (const [k, v] of b.totals) {
    if (k.endsWith(' ')) continue; // non-resource: /metrics, /readyz, discovery
    const d = v - (a.totals.get(k) ?? 0);
    if (d > 0) out.set(k, d / minutes);
  }
  return out;
}

export const sum = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);
