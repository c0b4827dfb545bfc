// Acknowledged writes survive kill -9: concurrent clients create, patch, replace and delete pods and
// ConfigMaps through the HTTP API of the bundle (a child process) until it is killed mid-stream;
// after a restart on the same data directory every write that got a 2xx is there exactly as
// answered, a write whose answer was lost is either there or not (never half), and the metabase
// passes PRAGMA integrity_check. No container runtime is needed (the endpoint does not exist): the
// test is about the metabase, and deletes use gracePeriodSeconds=0, which removes a pod at once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ensureBundle, type OutpostProcess, spawnOutpost } from '../helpers/outpost-process.ts';

const CLIENTS = 12;
const OBJECTS_PER_CLIENT = 4;
/** The kill comes after this many acknowledged writes, while every client still has writes in flight. */
const KILL_AFTER = 300;
const MAX_STEPS = 2_000;

type Kind = 'pods' | 'configmaps';
/** What an object is after a write: absent, or present with the value the writes gave it. */
interface State {
  present: boolean;
  value?: string | undefined;
  uid?: string;
  /** The object as written: without status and, for pods, without the resourceVersion (the
   * lifecycle manager's status reports bump it; a runtime that does not answer is one). */
  written?: string;
}
interface Tracked {
  kind: Kind;
  name: string;
  /** The state the last acknowledged write left (absent before any). */
  acked: State;
  /** When the last write got no answer: the state it would have left. */
  pending?: State;
  phase: number;
}

interface Meta {
  metadata: { uid: string; resourceVersion?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  status?: unknown;
}

function written(kind: Kind, body: Meta): string {
  const { status: _status, ...rest } = body;
  if (kind === 'configmaps') return JSON.stringify(rest);
  const { resourceVersion: _rv, ...metadata } = rest.metadata;
  return JSON.stringify({ ...rest, metadata });
}

const stateOf = (kind: Kind, body: Meta): State => ({
  present: true,
  value: genOf(kind, body),
  uid: body.metadata.uid,
  written: written(kind, body),
});

const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-writes-kill9-'));
const dataDir = join(dir, 'data');
const NS = 'durable';
const started: OutpostProcess[] = [];
const start = async () => {
  const p = await spawnOutpost({
    dataDir,
    runtimeEndpoint: `unix://${join(dir, 'no-runtime.sock')}`,
    nodeName: 'kill-node',
    logLevel: 'warn',
  });
  started.push(p);
  return p;
};

const genOf = (kind: Kind, body: Meta): string | undefined =>
  kind === 'pods' ? body.metadata.labels?.gen : body.data?.gen;

/** The write for an object's next phase: create, two changes, delete, and around again. */
function nextWrite(
  o: Tracked,
  step: number,
): { method: string; path: string; body?: unknown; type?: string; after: State } {
  const base = `/api/v1/namespaces/${NS}/${o.kind}`;
  const gen = String(step);
  const phase = o.phase % 4;
  if (phase === 0) {
    const body =
      o.kind === 'pods'
        ? {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: o.name, labels: { gen } },
            spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] },
          }
        : { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: o.name }, data: { gen } };
    return { method: 'POST', path: base, body, after: { present: true, value: gen } };
  }
  if (phase === 3) {
    return {
      method: 'DELETE',
      path: `${base}/${o.name}${o.kind === 'pods' ? '?gracePeriodSeconds=0' : ''}`,
      after: { present: false },
    };
  }
  const after = { present: true, value: gen };
  if (o.kind === 'pods') {
    const type = phase === 1 ? 'application/merge-patch+json' : 'application/strategic-merge-patch+json';
    return {
      method: 'PATCH',
      path: `${base}/${o.name}`,
      type,
      body: { metadata: { labels: { gen } } },
      after,
    };
  }
  if (phase === 1) {
    return {
      method: 'PATCH',
      path: `${base}/${o.name}`,
      type: 'application/merge-patch+json',
      body: { data: { gen } },
      after,
    };
  }
  const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: o.name }, data: { gen } };
  return { method: 'PUT', path: `${base}/${o.name}`, body, after };
}

test('acknowledged concurrent writes survive kill -9 exactly as answered; integrity_check is ok', async () => {
  ensureBundle();
  const first = await start();
  const objects: Tracked[][] = Array.from({ length: CLIENTS }, (_, c) =>
    Array.from({ length: OBJECTS_PER_CLIENT * 2 }, (_, i) => ({
      kind: (i % 2 === 0 ? 'pods' : 'configmaps') as Kind,
      name: `c${c}-o${i}`,
      acked: { present: false },
      phase: 0,
    })),
  );
  let acks = 0;
  let refused = 0;
  let killed: Promise<void> | undefined;
  const refusals: string[] = [];

  // Each client owns its objects, so its own acknowledged answers say what each must be.
  const client = async (mine: Tracked[]) => {
    for (let step = 0; step < MAX_STEPS; step++) {
      const o = mine[step % mine.length]!;
      const w = nextWrite(o, step);
      let res: Response;
      try {
        res = await fetch(first.url + w.path, {
          method: w.method,
          headers: { 'content-type': w.type ?? 'application/json', ...first.admin },
          ...(w.body === undefined ? {} : { body: JSON.stringify(w.body) }),
        });
      } catch {
        o.pending = w.after; // no answer: the write may or may not have happened
        return;
      }
      let body: Meta;
      try {
        body = (await res.json()) as Meta;
      } catch {
        o.pending = w.after; // killed while the answer was on its way
        return;
      }
      if (!res.ok) {
        refused++;
        refusals.push(`${w.method} ${w.path}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
        continue; // refused writes change nothing; the same write comes around again
      }
      o.acked = w.after.present ? stateOf(o.kind, body) : { present: false };
      assert.is(o.acked.value, w.after.value, `${w.method} ${w.path} answered the value written`);
      o.phase++;
      if (++acks === KILL_AFTER) killed = first.kill9();
    }
  };
  await Promise.all(objects.map(client));
  assert.ok(killed, `killed after ${KILL_AFTER} acknowledged writes (got ${acks})`);
  await killed;
  assert.equal(refusals, [], 'no write was refused');
  assert.is(refused, 0);

  const second = await start();
  let lost = 0;
  for (const o of objects.flat()) {
    const res = await fetch(`${second.url}/api/v1/namespaces/${NS}/${o.kind}/${o.name}`);
    const seen: State = res.status === 404 ? { present: false } : stateOf(o.kind, (await res.json()) as Meta);
    assert.ok(res.status === 200 || res.status === 404, `${o.kind}/${o.name}: ${res.status}`);
    const exact = JSON.stringify(seen) === JSON.stringify(o.acked);
    const asPending =
      o.pending !== undefined && seen.present === o.pending.present && seen.value === o.pending.value;
    if (!exact && !asPending) lost++;
    assert.ok(
      exact || asPending,
      `${o.kind}/${o.name}: acknowledged ${JSON.stringify(o.acked)}, pending ${JSON.stringify(o.pending)}, found ${JSON.stringify(seen)}`,
    );
  }
  assert.is(lost, 0);
  await second.kill9();

  const db = new Database(join(dataDir, 'outpost.db'));
  try {
    assert.equal(db.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
  } finally {
    db.close();
  }
});

test.after(async () => {
  for (const p of started) await p.kill9();
  rmSync(dir, { recursive: true, force: true });
});

test.run();
