// requestCertificate against a scripted API server: what ends the wait and what is waited out.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError, UnreachableError } from '#lib/cloud/context.ts';
import { requestCertificate } from '#lib/cloud/csr.ts';
import { silentLogger } from '#lib/log.ts';

const spec = {
  request: 'PEM',
  signerName: 'example.com/signer',
  usages: ['client auth'],
  generateName: 'x-',
};
const signed = { metadata: { name: 'x-1' }, status: { certificate: Buffer.from('CERT').toString('base64') } };
const pending = { metadata: { name: 'x-1' } };

/** A request function answering each GET with the next scripted answer (an Error is thrown). */
function api(answers: unknown[]) {
  const calls: { method: string; path: string; body?: unknown }[] = [];
  const request = async <T>(path: string, o: { method?: string; body?: unknown } = {}): Promise<T> => {
    calls.push({ method: o.method ?? 'GET', path, body: o.body });
    if (o.method === 'POST') return { metadata: { name: 'x-1' } } as T;
    const next = answers.shift();
    if (next instanceof Error) throw next;
    return next as T;
  };
  return { request, calls };
}

test('creates the request and waits out pending reads, 5xx and no answer until it is signed', async () => {
  const { request, calls } = api([
    pending,
    new ApiError(503, 'ServiceUnavailable', 'busy'),
    new UnreachableError('reset'),
    signed,
  ]);
  let waited = 0;
  const r = await requestCertificate({ request }, silentLogger, spec, {
    pollMs: 1,
    whileUnreachable: async () => {
      waited++;
    },
  });
  assert.equal(r, { certPem: 'CERT', csrName: 'x-1' });
  assert.is(waited, 1);
  assert.equal(calls[0], {
    method: 'POST',
    path: '/apis/certificates.k8s.io/v1/certificatesigningrequests',
    body: {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { generateName: 'x-' },
      spec: {
        request: Buffer.from('PEM').toString('base64'),
        signerName: 'example.com/signer',
        usages: ['client auth'],
      },
    },
  });
  assert.is(calls.length, 5);
});

test('with a watch, a pending request is watched, not polled, and read again when it changes', async () => {
  const { request, calls } = api([{ ...pending, metadata: { name: 'x-1', resourceVersion: '7' } }, signed]);
  const watched: string[] = [];
  const r = await requestCertificate({ request }, silentLogger, spec, {
    pollMs: 60_000, // a poll would time the test out
    watch: async function* (name, rv) {
      watched.push(`${name}@${rv}`);
      yield { type: 'BOOKMARK', object: {} };
      yield { type: 'MODIFIED', object: signed };
    },
  });
  assert.equal(r, { certPem: 'CERT', csrName: 'x-1' });
  assert.equal(watched, ['x-1@7']);
  assert.equal(
    calls.map((c) => c.method),
    ['POST', 'GET', 'GET'],
  );
});

test('a failing watch is retried after a growing pause, the request read again each time', async () => {
  const { request, calls } = api([pending, pending, pending, signed]);
  let watches = 0;
  const r = await requestCertificate({ request }, silentLogger, spec, {
    pollMs: 1,
    // biome-ignore lint/correctness/useYield: a watch that fails before its first event
    watch: async function* () {
      watches++;
      throw new Error('watch refused');
    },
  });
  assert.equal(r, { certPem: 'CERT', csrName: 'x-1' });
  assert.is(watches, 3);
  assert.is(calls.length, 5);
});

test('denied, deleted, forbidden, timed out and aborted requests end the wait', async () => {
  const denied = { ...pending, status: { conditions: [{ type: 'Denied', message: 'not you' }] } };
  const run = (answers: unknown[], o = {}) =>
    requestCertificate({ request: api(answers).request }, silentLogger, spec, { pollMs: 1, ...o }).then(
      () => 'signed',
      (e: Error) => e.message,
    );
  assert.is(await run([denied]), 'certificate signing request x-1 denied: not you');
  assert.is(
    await run([new ApiError(404, 'NotFound', 'gone')]),
    'certificate signing request x-1 was deleted',
  );
  assert.is(await run([new ApiError(403, 'Forbidden', 'no')]), 'no');
  assert.match(await run(Array(1000).fill(pending), { timeoutMs: 0 }), /was not approved within 0 s/);
  const ac = new AbortController();
  ac.abort(new Error('stopping'));
  assert.is(await run([pending], { signal: ac.signal }), 'stopping');
});

test.run();
