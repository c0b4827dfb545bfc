// The light Headers, Request and Response (lib/http/fetch-classes.ts) against Node's own (undici's),
// operation by operation: what a server does with them must come out the same. The install itself
// runs in a fresh node process, where Node's own have not been loaded.
import { spawnSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LightHeaders, LightRequest, LightResponse, nodeClass } from '#lib/http/fetch-classes.ts';

const NodeHeaders = nodeClass('Headers') as typeof Headers;
const NodeRequest = nodeClass('Request') as typeof Request;
const NodeResponse = nodeClass('Response') as typeof Response;

/** What a thunk gives, or the class of error it throws. */
const outcome = async (f: () => unknown): Promise<unknown> => {
  try {
    return { value: await f() };
  } catch (e) {
    return { error: (e as Error).constructor.name };
  }
};

const headerCases: [string, (H: typeof Headers) => unknown][] = [
  ['record init, sorted, folded', (H) => [...new H({ 'X-B': '2', 'x-a': ' 1 ', Accept: 'a' })]],
  [
    'pairs init, repeated names joined',
    (H) => [
      ...new H([
        ['a', '1'],
        ['A', '2'],
        ['b', '3'],
      ]),
    ],
  ],
  ['Headers init', (H) => [...new H(new H({ a: '1' }))]],
  ['get absent', (H) => new H().get('x')],
  [
    'set-cookie apart',
    (H) => {
      const h = new H();
      h.append('Set-Cookie', 'a=1');
      h.append('set-cookie', 'b=2');
      h.append('x', 'y');
      return { all: [...h], get: h.get('set-cookie'), list: h.getSetCookie() };
    },
  ],
  [
    'set, delete, has',
    (H) => {
      const h = new H({ a: '1', b: '2' });
      h.set('A', '3');
      h.delete('b');
      return { a: h.get('a'), b: h.has('B'), keys: [...h.keys()], values: [...h.values()] };
    },
  ],
  [
    'forEach',
    (H) => {
      const seen: string[] = [];
      new H({ b: '2', a: '1' }).forEach((v, k) => {
        seen.push(`${k}=${v}`);
      });
      return seen;
    },
  ],
  ['invalid name', (H) => new H({ 'bad name': 'x' })],
  ['invalid value', (H) => new H({ a: 'x\ny' })],
  ['bad pair', (H) => new H([['a', 'b', 'c']] as unknown as [string, string][])],
  ['value whitespace', (H) => new H({ a: '\t x y \r\n' }).get('a')],
  ['number value', (H) => new H({ a: 5 } as unknown as Record<string, string>).get('a')],
];

/** One test a case: the light class and Node's give the same value, or throw the same error class. */
function differential<C>(kind: string, cases: [string, (c: C) => unknown][], light: unknown, node: C) {
  for (const [name, f] of cases)
    test(`${kind}: ${name}`, async () => {
      assert.equal(await outcome(() => f(light as C)), await outcome(() => f(node)));
    });
}

differential('Headers', headerCases, LightHeaders, NodeHeaders);

/** A response's visible state, read fully. */
const readResponse = async (r: Response) => ({
  status: r.status,
  ok: r.ok,
  statusText: r.statusText,
  type: r.type,
  headers: [...r.headers],
  text: await r.text(),
  usedAfter: r.bodyUsed,
});

const responseCases: [string, (R: typeof Response) => unknown][] = [
  ['string body', (R) => readResponse(new R('hello', { status: 201, statusText: 'Made' }))],
  ['no body', (R) => readResponse(new R(null, { status: 204 }))],
  ['bytes body', (R) => readResponse(new R(new TextEncoder().encode('é')))],
  [
    'ArrayBuffer body',
    (R) => new R(new Uint8Array([1, 2, 3]).buffer).arrayBuffer().then((b) => [...new Uint8Array(b)]),
  ],
  ['URLSearchParams body', (R) => readResponse(new R(new URLSearchParams({ a: '1 2', b: 'é' })))],
  ['Blob body', (R) => readResponse(new R(new Blob(['x'], { type: 'text/x' })))],
  [
    'stream body',
    (R) => {
      const enc = new TextEncoder();
      const stream = new ReadableStream({
        start(c) {
          c.enqueue(enc.encode('a'));
          c.enqueue(enc.encode('b'));
          c.close();
        },
      });
      return readResponse(new R(stream, { headers: { 'content-type': 'text/plain' } }));
    },
  ],
  ['json()', (R) => new R('{"a":[1]}').json()],
  ['bad json()', (R) => new R('{').json()],
  [
    'blob()',
    async (R) => {
      const b = await new R('xyz', { headers: { 'content-type': 'a/b' } }).blob();
      return [b.size, b.type, await b.text()];
    },
  ],
  [
    'read twice',
    async (R) => {
      const r = new R('x');
      await r.text();
      return r.text();
    },
  ],
  [
    'body stream then bodyUsed',
    async (R) => {
      const r = new R('abc');
      const reader = r.body!.getReader();
      const first = await reader.read();
      return [r.bodyUsed, new TextDecoder().decode(first.value)];
    },
  ],
  ['null body has no stream', (R) => new R(null).body],
  [
    'clone of string body',
    async (R) => {
      const r = new R('abc', { status: 202, headers: { a: '1' } });
      const c = r.clone();
      return [await r.text(), await c.text(), c.status, [...c.headers]];
    },
  ],
  [
    'clone of stream body',
    async (R) => {
      const r = new R(new Blob(['streamed']).stream());
      const c = r.clone();
      return [await c.text(), await r.text()];
    },
  ],
  [
    'clone after read',
    async (R) => {
      const r = new R('x');
      await r.text();
      return r.clone();
    },
  ],
  ['status out of range', (R) => new R(null, { status: 600 })],
  ['status 0', (R) => new R(null, { status: 0 })],
  ['body with 204', (R) => new R('x', { status: 204 })],
  ['bad status text', (R) => new R(null, { statusText: 'a\nb' })],
  ['Response.json', (R) => readResponse(R.json({ a: 1 }, { status: 201 }))],
  [
    'Response.json keeps a content type',
    (R) => readResponse(R.json([1], { headers: { 'Content-Type': 'application/merge-patch+json' } })),
  ],
  ['Response.json of undefined', (R) => R.json(undefined)],
  [
    'Response.redirect',
    (R) => {
      const r = R.redirect('http://example.com/a b', 307);
      return [r.status, r.headers.get('location')];
    },
  ],
  ['Response.redirect bad status', (R) => R.redirect('http://example.com/', 200 as 301)],
  ['Response.redirect relative', (R) => R.redirect('/x', 302)],
  [
    'Response.error',
    (R) => {
      const r = R.error();
      return [r.status, r.type, r.ok];
    },
  ],
  [
    'headers of an init Headers are copied',
    (R) => {
      const h = new R('').headers.constructor as typeof Headers;
      const init = new h({ a: '1' });
      const r = new R(null, { headers: init });
      init.set('a', '2');
      return r.headers.get('a');
    },
  ],
  [
    'URL-encoded formData',
    async (R) => {
      const f = await new R('token=a%20b&x=1&x=2', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }).formData();
      const seen: string[] = [];
      f.forEach((v, k) => {
        seen.push(`${k}=${v}`);
      });
      return [seen, f.get('token'), f.getAll('x'), f.has('y')];
    },
  ],
  [
    'multipart formData',
    async (R) => {
      const body = '--b\r\nContent-Disposition: form-data; name="token"\r\n\r\nabc\r\n--b--\r\n';
      const f = await new R(body, {
        headers: { 'content-type': 'multipart/form-data; boundary=b' },
      }).formData();
      return f.get('token');
    },
  ],
];

differential('Response', responseCases, LightResponse, NodeResponse);

/** A request's visible state, its body read. */
const readRequest = async (r: Request) => ({
  url: r.url,
  method: r.method,
  headers: [...r.headers],
  aborted: r.signal.aborted,
  redirect: r.redirect,
  text: await r.text(),
});

const requestCases: [string, (Q: typeof Request) => unknown][] = [
  ['GET', (Q) => readRequest(new Q('http://h:1/a?b=c#d'))],
  ['URL object', (Q) => readRequest(new Q(new URL('http://h/x y')))],
  ['relative URL', (Q) => new Q('/api/v1/pods')],
  ['URL with credentials', (Q) => new Q('http://u:p@h/')],
  [
    'method normalized',
    (Q) => [new Q('http://h/', { method: 'post' }).method, new Q('http://h/', { method: 'patch' }).method],
  ],
  ['bad method', (Q) => new Q('http://h/', { method: 'B D' })],
  ['forbidden method', (Q) => new Q('http://h/', { method: 'connect' })],
  ['GET with a body', (Q) => new Q('http://h/', { body: 'x' })],
  ['POST string body', (Q) => readRequest(new Q('http://h/', { method: 'POST', body: '{"a":1}' }))],
  ['POST json()', (Q) => new Q('http://h/', { method: 'POST', body: '{"a":1}' }).json()],
  [
    'POST stream body',
    (Q) =>
      readRequest(
        new Q('http://h/', { method: 'PUT', body: new Blob(['s']).stream(), duplex: 'half' } as RequestInit),
      ),
  ],
  [
    'POST URLSearchParams body',
    (Q) => readRequest(new Q('http://h/', { method: 'POST', body: new URLSearchParams('a=1') })),
  ],
  [
    'abort signal',
    (Q) => {
      const a = new AbortController();
      const r = new Q('http://h/', { signal: a.signal });
      a.abort();
      return r.signal.aborted;
    },
  ],
  [
    'from a request: body moves',
    async (Q) => {
      const first = new Q('http://h/', { method: 'POST', body: 'moved', headers: { a: '1' } });
      const second = new Q(first);
      return [await readRequest(second), first.bodyUsed];
    },
  ],
  [
    'from a request: new method and headers',
    (Q) =>
      readRequest(
        new Q(new Q('http://h/', { method: 'DELETE', headers: { a: '1' } }), { headers: { b: '2' } }),
      ),
  ],
  [
    'from a used request',
    async (Q) => {
      const first = new Q('http://h/', { method: 'POST', body: 'x' });
      await first.text();
      return new Q(first);
    },
  ],
  [
    'clone',
    async (Q) => {
      const r = new Q('http://h/', { method: 'POST', body: 'twice' });
      const c = r.clone();
      return [await r.text(), await c.text(), c.method];
    },
  ],
];

differential('Request', requestCases, LightRequest, NodeRequest);

test('installed in a fresh node: the globals are the light classes and Node never loads undici', () => {
  const script = `
    const m = await import(${JSON.stringify(new URL('../../lib/http/fetch-classes.ts', import.meta.url).href)});
    const installed = m.installFetchClasses();
    const same = globalThis.Headers === m.LightHeaders && globalThis.Request === m.LightRequest && globalThis.Response === m.LightResponse;
    const text = await new Response(JSON.stringify({ a: 1 }), { headers: new Headers({ x: '1' }) }).text();
    const before = process.moduleLoadList.some((x) => x.includes('undici'));
    const NodeResponse = m.nodeClass('Response');
    const after = process.moduleLoadList.some((x) => x.includes('undici'));
    console.log(JSON.stringify({ installed, same, text, before, after, nodeDiffers: NodeResponse !== Response, stillLight: globalThis.Response === m.LightResponse, again: m.installFetchClasses() }));
  `;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, OUTPOST_FETCH_CLASSES: 'node' },
  });
  assert.is(run.status, 0, run.stderr);
  assert.equal(JSON.parse(run.stdout.trim().split('\n').pop()!), {
    installed: true,
    same: true,
    text: '{"a":1}',
    before: false,
    after: true,
    nodeDiffers: true,
    stillLight: true,
    again: false,
  });
});

test.run();
