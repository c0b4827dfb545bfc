// The differential suite: each case runs the same requests against Outpost and against the real
// kube-apiserver of the cloud lab (as cluster admin, in a scratch namespace) and compares status
// codes, reasons and response shapes (keys, kinds, list metadata; not uids or times) and, for
// watches, the event types of a scenario whose order is fixed (bookmarks ignored). A difference
// fails unless docs/compatibility.md lists it, with its reason, under "Differential suite".
//
// Only deterministic scenarios exist here: every object is label-selected (the controller manager
// adds kube-root-ca.crt to each namespace whenever it gets to it), pods name a scheduler that does
// not exist (the lab's scheduler would otherwise write their status at a time of its choosing), and
// nothing depends on compaction or on when the API server's watch cache catches up.
// biome-ignore-all lint/suspicious/noExplicitAny: answers are compared as loose JSON.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { cloudLabOrSkip } from '../helpers/cloud.ts';
import {
  type Answer,
  acceptedDifferences,
  shapeDiff,
  type Target,
  target,
  unexplained,
  type Watch,
} from '../helpers/differential.ts';
import { waitFor } from '../helpers/lab.ts';

const lab = await cloudLabOrSkip('cloud-differential');
if (lab) {
  const ns = `diff-${Math.random().toString(36).slice(2, 7)}`;
  let agent: TestAgent;
  let outpost: Target;
  let kube: Target;
  const accepted = acceptedDifferences();

  test.before(async () => {
    agent = await startTestAgent();
    outpost = target('outpost', agent.url, undefined, agent.admin);
    kube = target('kube-apiserver', lab.server, {
      ca: readFileSync(lab.caFile),
      cert: readFileSync(join(lab.dir, 'admin.crt')),
      key: readFileSync(join(lab.dir, 'admin.key')),
    });
    await lab.createNamespace(ns);
  });
  test.after(async () => {
    await agent?.stop();
    await lab.stop();
  });

  const seen = (a: Answer) => ({ code: a.status, body: a.body });
  const cm = (name: string, labels: Record<string, string>, data: Record<string, string> = { a: '1' }) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels },
    data,
  });
  const pod = (name: string, labels: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels },
    spec: {
      // No scheduler picks the pod up on the lab, so nothing but this test writes it.
      schedulerName: 'outpost-differential-none',
      automountServiceAccountToken: false,
      containers: [{ name: 'main', image: 'busybox:1.36', command: ['sleep', '3600'] }],
    },
  });
  const base = (kind: 'pods' | 'configmaps' | 'secrets') => `/api/v1/namespaces/${ns}/${kind}`;
  const MERGE = 'application/merge-patch+json';
  const STRATEGIC = 'application/strategic-merge-patch+json';
  const JSONPATCH = 'application/json-patch+json';
  const APPLY = 'application/apply-patch+yaml';

  /** Events until `done` holds for one (bookmarks are kept here and dropped by `types`). */
  async function until(w: Watch, done: (e: { type: string; object: any }) => boolean) {
    const ok = await waitFor(() => w.events.some(done), 60_000, 50);
    w.close();
    if (!ok)
      throw new Error(
        `watch: the awaited event never came; saw ${JSON.stringify(w.events.map((e) => e.type))}`,
      );
    return w.events;
  }
  const noBookmarks = (events: { type: string; object: any }[]) =>
    events.filter((e) => e.type !== 'BOOKMARK');
  const named = (name: string) => (e: { type: string; object: any }) => e.object?.metadata?.name === name;

  /**
   * A list at resourceVersion `rv` answers only once the server's cache holds it: afterwards a watch
   * from `rv` never meets kube-apiserver's "Too large resource version" (its cache catching up).
   */
  async function cacheAt(t: Target, rv: string, selector: string) {
    const path = `${base('configmaps')}?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan&labelSelector=${selector}`;
    const ok = await waitFor(async () => (await t.request('GET', path)).status !== 504, 60_000, 500);
    if (!ok) throw new Error(`${t.name}: its cache never reached resourceVersion ${rv}`);
  }

  const DISCOVERED = [
    'pods',
    'pods/status',
    'pods/log',
    'pods/exec',
    'pods/eviction',
    'configmaps',
    'secrets',
    'nodes',
  ];
  const cases: { name: string; run(t: Target): Promise<unknown> }[] = [
    {
      name: 'discovery',
      async run(t) {
        const out: Record<string, unknown> = {};
        for (const p of [
          '/api',
          '/api/',
          '/api/v1',
          '/api/v1/',
          '/apis',
          '/apis/',
          '/version',
          '/version/',
        ]) {
          const { status, body } = await t.request('GET', p);
          let view = body;
          if (p.startsWith('/api/v1'))
            view = {
              ...body,
              resources: Object.fromEntries(
                DISCOVERED.map((n) => [n, body.resources?.find((r: { name: string }) => r.name === n)]),
              ),
            };
          // The groups differ (devices and metrics here, the built-in ones there): one entry's shape.
          else if (p.startsWith('/apis'))
            view = {
              ...body,
              groups: body.groups?.slice(0, 1).map((g: any) => ({ ...g, versions: g.versions.slice(0, 1) })),
            };
          out[p] = { code: status, body: view };
        }
        return out;
      },
    },
    {
      name: 'configmap-crud',
      async run(t) {
        const labels = { case: 'cm-crud' };
        const path = `${base('configmaps')}/crud`;
        const create = await t.request('POST', base('configmaps'), { body: cm('crud', labels) });
        const get = await t.request('GET', path);
        const replace = await t.request('PUT', path, {
          body: { ...get.body, data: { a: '2' } },
        });
        const merge = await t.request('PATCH', path, { type: MERGE, body: { data: { b: '1' } } });
        const strategic = await t.request('PATCH', path, { type: STRATEGIC, body: { data: { c: '1' } } });
        const json = await t.request('PATCH', path, {
          type: JSONPATCH,
          body: [{ op: 'remove', path: '/data/c' }],
        });
        const list = await t.request('GET', `${base('configmaps')}?labelSelector=case%3Dcm-crud`);
        const del = await t.request('DELETE', path);
        const gone = await t.request('GET', path);
        return { create, get, replace, merge, strategic, json, list, del, gone };
      },
    },
    {
      name: 'pod-crud',
      async run(t) {
        const labels = { case: 'pod-crud' };
        const path = `${base('pods')}/crud`;
        const create = await t.request('POST', base('pods'), { body: pod('crud', labels) });
        const get = await t.request('GET', path);
        const body = structuredClone(get.body);
        if (body?.spec?.containers?.[0]) body.spec.containers[0].image = 'busybox:1.37';
        const replace = await t.request('PUT', path, { body });
        const merge = await t.request('PATCH', path, {
          type: MERGE,
          body: { metadata: { labels: { m: '1' } } },
        });
        const strategic = await t.request('PATCH', path, {
          type: STRATEGIC,
          body: { metadata: { annotations: { s: '1' } } },
        });
        const json = await t.request('PATCH', path, {
          type: JSONPATCH,
          body: [{ op: 'replace', path: '/metadata/labels/m', value: '2' }],
        });
        const apply = await t.request('PATCH', `${path}?fieldManager=differential`, {
          type: APPLY,
          body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'crud', labels: { applied: 'yes' } } },
        });
        const list = await t.request('GET', `${base('pods')}?labelSelector=case%3Dpod-crud`);
        const del = await t.request('DELETE', path);
        const gone = await t.request('GET', path);
        return { create, get, replace, merge, strategic, json, apply, list, del, gone };
      },
    },
    {
      name: 'secret-crud',
      async run(t) {
        const path = `${base('secrets')}/crud`;
        const create = await t.request('POST', base('secrets'), {
          body: {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: 'crud', labels: { case: 'secret-crud' } },
            stringData: { user: 'admin' },
            data: { pass: Buffer.from('s3cret').toString('base64') },
          },
        });
        const get = await t.request('GET', path);
        const merge = await t.request('PATCH', path, { type: MERGE, body: { stringData: { more: 'x' } } });
        const badBase64 = await t.request('PATCH', path, { type: MERGE, body: { data: { bad: '%%%' } } });
        const typeChange = await t.request('PATCH', path, {
          type: MERGE,
          body: { type: 'kubernetes.io/tls' },
        });
        const list = await t.request('GET', `${base('secrets')}?labelSelector=case%3Dsecret-crud`);
        const del = await t.request('DELETE', path);
        return { create, get, merge, badBase64, typeChange, list, del };
      },
    },
    {
      name: 'pod-status',
      async run(t) {
        const path = `${base('pods')}/st`;
        await t.request('POST', base('pods'), { body: pod('st', { case: 'pod-status' }) });
        const get = await t.request('GET', `${path}/status`);
        const patch = await t.request('PATCH', `${path}/status`, {
          type: STRATEGIC,
          body: { status: { conditions: [{ type: 'Outpost', status: 'True' }] } },
        });
        const missing = await t.request('GET', `${base('pods')}/missing/status`);
        await t.request('DELETE', path);
        return { get, patch, missing };
      },
    },
    {
      name: 'all-namespaces',
      async run(t) {
        await t.request('POST', base('configmaps'), { body: cm('everywhere', { case: 'all-ns' }) });
        const list = await t.request('GET', '/api/v1/configmaps?labelSelector=case%3Dall-ns');
        const pods = await t.request('GET', '/api/v1/pods?labelSelector=case%3Dnone-such');
        return { list, pods };
      },
    },
    {
      name: 'errors',
      async run(t) {
        const labels = { case: 'errors' };
        await t.request('POST', base('configmaps'), { body: cm('taken', labels) });
        const stale = await t.request('GET', `${base('configmaps')}/taken`);
        await t.request('PATCH', `${base('configmaps')}/taken`, { type: MERGE, body: { data: { a: '2' } } });
        return {
          missingConfigMap: await t.request('GET', `${base('configmaps')}/missing`),
          missingPod: await t.request('GET', `${base('pods')}/missing`),
          alreadyExists: await t.request('POST', base('configmaps'), { body: cm('taken', labels) }),
          staleReplace: await t.request('PUT', `${base('configmaps')}/taken`, { body: stale.body }),
          invalidName: await t.request('POST', base('configmaps'), { body: cm('Bad_Name', labels) }),
          podWithoutContainers: await t.request('POST', base('pods'), {
            body: { ...pod('empty', labels), spec: { containers: [] } },
          }),
          malformedBody: await t.request('POST', base('configmaps'), { body: '{"metadata":' }),
          badLabelSelector: await t.request('GET', `${base('configmaps')}?labelSelector=a%20in%20(`),
          unsupportedPatch: await t.request('PATCH', `${base('configmaps')}/taken`, {
            type: 'text/plain',
            body: 'x',
          }),
          failedTestOp: await t.request('PATCH', `${base('configmaps')}/taken`, {
            type: JSONPATCH,
            body: [{ op: 'test', path: '/data/a', value: 'nope' }],
          }),
          nameMismatch: await t.request('PUT', `${base('configmaps')}/taken`, { body: cm('other', labels) }),
        };
      },
    },
    {
      name: 'selectors',
      async run(t) {
        for (const [n, tier] of [
          ['s1', 'a'],
          ['s2', 'b'],
          ['s3', 'a'],
        ] as const)
          await t.request('POST', base('configmaps'), { body: cm(n, { case: 'sel', tier }) });
        const names = async (q: string) => {
          const a = await t.request('GET', `${base('configmaps')}?${q}`);
          return {
            code: a.status,
            names: a.body.items?.map((i: any) => i.metadata.name),
            reason: a.body.reason,
          };
        };
        return {
          equality: await names('labelSelector=case%3Dsel,tier%3Da'),
          set: await names('labelSelector=case%3Dsel,tier%20in%20(b)'),
          notIn: await names('labelSelector=case%3Dsel,tier%20notin%20(a)'),
          exists: await names('labelSelector=case%3Dsel,!tier'),
          field: await names('labelSelector=case%3Dsel&fieldSelector=metadata.name%3Ds2'),
          fieldNot: await names('labelSelector=case%3Dsel&fieldSelector=metadata.name!%3Ds2'),
          namespaceField: await names(`labelSelector=case%3Dsel&fieldSelector=metadata.namespace%3D${ns}`),
          unknownField: await names('fieldSelector=data.a%3D1'),
        };
      },
    },
    {
      name: 'paging',
      async run(t) {
        for (const n of ['p1', 'p2', 'p3', 'p4', 'p5'])
          await t.request('POST', base('configmaps'), { body: cm(n, { case: 'page' }) });
        const pages: unknown[] = [];
        let cont = '';
        for (let i = 0; i < 4; i++) {
          const a = await t.request(
            'GET',
            `${base('configmaps')}?labelSelector=case%3Dpage&limit=2${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
          );
          pages.push({
            code: a.status,
            metadata: a.body.metadata,
            names: a.body.items?.map((x: any) => x.metadata.name),
          });
          cont = a.body.metadata?.continue ?? '';
          if (!cont) break;
        }
        const badContinue = await t.request('GET', `${base('configmaps')}?limit=2&continue=not-a-token`);
        return { pages, badContinue: { code: badContinue.status, reason: badContinue.body.reason } };
      },
    },
    {
      name: 'dry-run',
      async run(t) {
        const labels = { case: 'dry' };
        const cmCreate = await t.request('POST', `${base('configmaps')}?dryRun=All`, {
          body: cm('dry', labels),
        });
        const cmAfter = await t.request('GET', `${base('configmaps')}/dry`);
        const podCreate = await t.request('POST', `${base('pods')}?dryRun=All`, { body: pod('dry', labels) });
        const podAfter = await t.request('GET', `${base('pods')}/dry`);
        await t.request('POST', base('configmaps'), { body: cm('dry-kept', labels) });
        const dryDelete = await t.request('DELETE', `${base('configmaps')}/dry-kept?dryRun=All`);
        const kept = await t.request('GET', `${base('configmaps')}/dry-kept`);
        return {
          cmCreate,
          cmAfter,
          podCreate,
          podAfter,
          dryDelete,
          kept: { code: kept.status },
          badDryRun: seen(
            await t.request('POST', `${base('configmaps')}?dryRun=Some`, { body: cm('x', labels) }),
          ),
        };
      },
    },
    {
      name: 'watch-from-resource-version',
      async run(t) {
        const sel = 'case%3Dwrv';
        const first = await t.request('POST', base('configmaps'), { body: cm('w0', { case: 'wrv' }) });
        const rv = first.body.metadata.resourceVersion;
        await cacheAt(t, rv, sel);
        const w = await t.watch(`${base('configmaps')}?watch=1&resourceVersion=${rv}&labelSelector=${sel}`);
        await t.request('POST', base('configmaps'), { body: cm('w1', { case: 'wrv' }) });
        await t.request('PATCH', `${base('configmaps')}/w1`, { type: MERGE, body: { data: { a: '2' } } });
        await t.request('DELETE', `${base('configmaps')}/w1`);
        const events = noBookmarks(await until(w, (e) => e.type === 'DELETED' && named('w1')(e)));
        return { code: w.status, types: events.map((e) => e.type), events };
      },
    },
    {
      name: 'watch-initial-state',
      async run(t) {
        const sel = 'case%3Dwini';
        for (const n of ['i1', 'i2'])
          await t.request('POST', base('configmaps'), { body: cm(n, { case: 'wini' }) });
        const w = await t.watch(
          `${base('configmaps')}?watch=1&allowWatchBookmarks=true&labelSelector=${sel}`,
        );
        // The initial state first (two ADDED), then the changes made after it arrived.
        if (!(await waitFor(() => noBookmarks(w.events).length >= 2, 60_000, 50)))
          throw new Error(`${t.name}: no initial events; saw ${JSON.stringify(w.events)}`);
        await t.request('POST', base('configmaps'), { body: cm('i3', { case: 'wini' }) });
        await t.request('DELETE', `${base('configmaps')}/i3`);
        const events = noBookmarks(await until(w, (e) => e.type === 'DELETED'));
        return {
          code: w.status,
          types: events.map((e) => e.type),
          initial: events.slice(0, 2).map((e) => e.object?.metadata?.name),
          events,
        };
      },
    },
    {
      name: 'watch-True',
      async run(t) {
        const sel = 'case%3Dwtrue';
        const first = await t.request('POST', base('configmaps'), { body: cm('t0', { case: 'wtrue' }) });
        const rv = first.body.metadata.resourceVersion;
        await cacheAt(t, rv, sel);
        // The Python client's spelling of both booleans.
        const w = await t.watch(
          `${base('configmaps')}?watch=True&allowWatchBookmarks=True&resourceVersion=${rv}&labelSelector=${sel}`,
        );
        await t.request('DELETE', `${base('configmaps')}/t0`);
        const events = noBookmarks(await until(w, (e) => e.type === 'DELETED'));
        return { code: w.status, types: events.map((e) => e.type) };
      },
    },
    {
      name: 'send-initial-events',
      async run(t) {
        const sel = 'case%3Dsie';
        for (const n of ['e1', 'e2'])
          await t.request('POST', base('configmaps'), { body: cm(n, { case: 'sie' }) });
        // client-go's streaming list (WatchList).
        const w = await t.watch(
          `${base('configmaps')}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&labelSelector=${sel}`,
        );
        if (w.status !== 200) return { code: w.status, body: w.body };
        const events = await until(
          w,
          (e) =>
            e.type === 'BOOKMARK' &&
            e.object?.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true',
        );
        return { code: w.status, types: noBookmarks(events).map((e) => e.type) };
      },
    },
    {
      name: 'table',
      async run(t) {
        const labels = { case: 'table' };
        await t.request('POST', base('configmaps'), { body: cm('tbl', labels) });
        await t.request('POST', base('pods'), { body: pod('tbl', labels) });
        const accept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
        const view = async (kind: 'pods' | 'configmaps') => {
          const a = await t.request('GET', `${base(kind)}?labelSelector=case%3Dtable`, { accept });
          const { rows, columnDefinitions, ...rest } = a.body;
          return {
            code: a.status,
            ...rest,
            columns: columnDefinitions?.map((c: any) => c.name),
            columnDefinitions,
            // Cells hold ages and states: only their number and the name are compared.
            rows: rows?.map((r: any) => ({ ...r, cells: r.cells.length, name: r.cells[0] })),
          };
        };
        return { configmaps: await view('configmaps'), pods: await view('pods') };
      },
    },
  ];

  for (const c of cases) {
    test(`differential: ${c.name}`, async () => {
      const mine = await c.run(outpost);
      const theirs = await c.run(kube);
      const diffs = shapeDiff(mine, theirs);
      const left = unexplained(c.name, diffs, accepted);
      if (left.length > 0) {
        const dump = (v: unknown) => JSON.stringify(v, null, 1).slice(0, 20_000);
        process.stderr.write(
          `\n--- ${c.name}: Outpost\n${dump(mine)}\n--- ${c.name}: kube-apiserver\n${dump(theirs)}\n`,
        );
      }
      assert.equal(left, [], `${c.name}: differences not listed in docs/compatibility.md`);
    });
  }

  test('Outpost ends the initial events of a streaming list with the bookmark kube-apiserver 1.27+ sends', async () => {
    const w = await outpost.watch(
      `${base('configmaps')}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&labelSelector=case%3Dsie`,
    );
    const events = await until(w, (e) => e.type === 'BOOKMARK');
    assert.equal(
      events.map((e) => e.type),
      ['ADDED', 'ADDED', 'BOOKMARK'],
    );
    assert.is(events[2]!.object.metadata.annotations['k8s.io/initial-events-end'], 'true');
  });

  test('every accepted difference names a case of this suite and says why', () => {
    const names = new Set(['*', ...cases.map((c) => c.name)]);
    for (const a of accepted) {
      assert.ok(names.has(a.case), `docs/compatibility.md lists an unknown case ${a.case}`);
      assert.ok(a.why.length > 10, `docs/compatibility.md: ${a.case} ${a.path} needs a reason`);
    }
  });
}
test.run();
