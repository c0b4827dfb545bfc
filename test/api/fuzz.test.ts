// 10,000+ random and malformed requests: no 500, no crash, every error a Status, still serving after.
import { connect } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { METHODS } from '#lib/app.ts';
import { routes } from '../../routes/_table.gen.ts';
import { startTestAgent } from '../helpers/agent.ts';
import { testApp } from '../helpers/app.ts';
import { seeded } from '../helpers/random.ts';

// Seeded, so a failure can be replayed.
const SEED = Number(process.env.FUZZ_SEED ?? 20261121);
const rand = seeded(SEED);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

const NASTY = [
  '',
  '..',
  '../../etc/passwd',
  '%2e%2e',
  '%00',
  '%ff%fe',
  'a'.repeat(300),
  '💥',
  'x y',
  "';--",
  '{}',
  '%',
  '-',
  'UPPER',
  '.',
  '*',
];
const VALUES = [
  '',
  '0',
  '-1',
  'abc',
  '1e309',
  '99999999999999999999',
  'true',
  'None',
  'Object',
  'app=web',
  'app in (',
  '!!',
  'metadata.name=x',
  'spec.bogus=1',
  '%zz',
  'a'.repeat(5000),
  '2026-13-45T99:99:99Z',
  '\u0000',
  '💥',
];
const KEYS = [
  'labelSelector',
  'fieldSelector',
  'limit',
  'continue',
  'resourceVersion',
  'includeObject',
  'timeoutSeconds',
  'container',
  'tailLines',
  'sinceSeconds',
  'sinceTime',
  'limitBytes',
  'previous',
  'timestamps',
  'command',
  'stdin',
  'tty',
  'verbose',
  'user',
  'watch',
];
const BODIES = [
  '',
  '{',
  '[]',
  'null',
  '{"command":[]}',
  '{"command":"ls"}',
  '{"command":["sh"],"timeoutSeconds":-5}',
  '["web","db"]',
  '{"spec":{"properties":[{"name":1}]}}',
  '{"metadata":{"resourceVersion":"abc"}}',
  'not json at all',
  '\uFFFD\uFFFD',
];

function randomPath(): string {
  if (rand() < 0.15)
    return `/${Array.from({ length: 1 + Math.floor(rand() * 5) }, () => encodeURIComponent(pick(NASTY))).join('/')}`;
  const r = pick(routes);
  return r.path.replace(/:(\w+)/g, () =>
    rand() < 0.5 ? pick(['default', 'web', 'x', 'sensors']) : encodeURIComponent(pick(NASTY)),
  );
}

function randomQuery(): string {
  const n = Math.floor(rand() * 4);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const key = pick(KEYS);
    // A real watch never ends by itself, and any value but 0/false asks for one (as on
    // kube-apiserver), so the fuzz sends only the values that mean no watch.
    const value = key === 'watch' ? pick(['false', '0', '']) : pick(VALUES);
    parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

test('10,000 random requests in process: no 500, every JSON error is a Status', async () => {
  const { app } = testApp();
  const problems: string[] = [];
  for (let i = 0; i < 10_000; i++) {
    const method = rand() < 0.9 ? pick(METHODS) : pick(['HEAD', 'OPTIONS', 'PROPFIND']);
    const url = randomPath() + randomQuery();
    const headers: Record<string, string> = {};
    if (rand() < 0.7)
      headers['content-type'] = pick([
        'application/json',
        'application/merge-patch+json',
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/json; charset=utf-16',
      ]);
    if (rand() < 0.5)
      headers.accept = pick([
        'application/json;as=Table;v=v1;g=meta.k8s.io',
        'application/vnd.kubernetes.protobuf',
        '*/*',
        'garbage',
      ]);
    let body: string | Uint8Array | undefined;
    if (method !== 'GET' && method !== 'HEAD') {
      const r = rand();
      body =
        r < 0.05
          ? 'x'.repeat(2 << 20)
          : r < 0.1
            ? new Uint8Array([0xff, 0xfe, 0x7b, 0xc3, 0x28])
            : pick(BODIES);
    }
    let res: Response;
    try {
      res = await app.request(url, { method, headers, ...(body === undefined ? {} : { body }) });
    } catch (e) {
      problems.push(`#${i} ${method} ${url}: threw ${(e as Error).message}`);
      continue;
    }
    const text = await res.text();
    if (res.status === 500) problems.push(`#${i} ${method} ${url}: 500 ${text.slice(0, 200)}`);
    if (method === 'HEAD') continue; // no body by definition
    if (res.status >= 400 && (res.headers.get('content-type') ?? '').includes('json')) {
      let s: { kind?: string; code?: number; reason?: string };
      try {
        s = JSON.parse(text);
      } catch {
        problems.push(`#${i} ${method} ${url}: ${res.status} with a body that is not JSON`);
        continue;
      }
      // keadm's batch restart answers its own RestartResponse shape, errors included (documented).
      const keadm = /\/pods\/restart(\?|$)/.test(url) && 'errMessages' in s;
      if (!keadm && (s.kind !== 'Status' || s.code !== res.status))
        problems.push(`#${i} ${method} ${url}: ${res.status} is not a Status: ${text.slice(0, 120)}`);
      if (res.status === 503 && s.reason !== 'ServiceUnavailable')
        problems.push(`#${i} ${method} ${url}: 503 ${s.reason}`);
    } else if (res.status >= 400 && method !== 'HEAD' && !/healthz|livez|readyz/.test(url)) {
      problems.push(`#${i} ${method} ${url}: ${res.status} answered ${res.headers.get('content-type')}`);
    }
    if (problems.length > 20) break;
  }
  assert.equal(problems, [], `seed ${SEED}`);
  const health = await app.request('/healthz');
  assert.is(health.status, 200);
});

test('malformed bytes on a real socket: the server answers 4xx or closes, and keeps serving', async () => {
  const agent = await startTestAgent();
  const { port } = new URL(agent.url);
  const raw = (bytes: Buffer) =>
    new Promise<string>((resolve) => {
      const s = connect(Number(port), '127.0.0.1');
      let out = '';
      s.on('data', (d) => {
        out += d.toString('latin1');
      });
      s.on('error', () => resolve(out));
      s.on('close', () => resolve(out));
      s.end(bytes);
      setTimeout(() => s.destroy(), 3000).unref();
    });
  const inputs = [
    Buffer.from('GET /api/v1/namespaces/\xff\xfe/pods HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'),
    Buffer.from(`GET /pods HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    Buffer.from('NOT-HTTP\r\n\r\n'),
    Buffer.from('POST /pods/default/web/restart HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n{"a"'),
    Buffer.from('GET /pods?labelSelector=%ZZ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
    Buffer.from(
      'POST /pods/default/web/exec HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n',
    ),
    Buffer.from('GET /pods HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n'),
  ];
  for (const input of inputs) {
    const answer = await raw(input);
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
    assert.ok(
      status === 0 || (status >= 200 && status < 500),
      `${input.toString('latin1').slice(0, 60)} → ${answer.slice(0, 80)}`,
    );
  }
  const health = await fetch(`${agent.url}/healthz`);
  assert.is(health.status, 200, 'still serving');
  await agent.stop();
});

test.run();
