// The request body limit (--max-body-bytes): a write over it is a 413 Status whether or not it
// says its length up front; reads carry no body and are not held up by it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultLimits } from '#lib/http/limits.ts';
import { testApp } from '../helpers/app.ts';

const limited = () => testApp({ limits: defaultLimits(Date.now, { maxBodyBytes: 200 }) });
const big = JSON.stringify({
  metadata: { name: 'big', labels: { pad: 'x'.repeat(300) } },
  spec: { containers: [{ name: 'm', image: 'busybox' }] },
});

test('a body over the limit with its Content-Length is 413 RequestEntityTooLarge', async () => {
  const { app } = limited();
  const res = await app.request('/api/v1/namespaces/default/pods', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': String(big.length) },
    body: big,
  });
  assert.is(res.status, 413);
  assert.is(((await res.json()) as { reason: string }).reason, 'RequestEntityTooLarge');
});

test('a streamed body over the limit (no Content-Length) is 413 too', async () => {
  const { app } = limited();
  const body = new ReadableStream({
    start(c) {
      c.enqueue(new TextEncoder().encode(big));
      c.close();
    },
  });
  const res = await app.request('/api/v1/namespaces/default/pods', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    duplex: 'half',
  } as RequestInit);
  assert.is(res.status, 413);
  assert.is(((await res.json()) as { reason: string }).reason, 'RequestEntityTooLarge');
});

test('a body under the limit is served, and reads are not limited', async () => {
  const { app } = limited();
  const small = JSON.stringify({
    metadata: { name: 'a' },
    spec: { containers: [{ name: 'm', image: 'b' }] },
  });
  const res = await app.request('/api/v1/namespaces/default/pods', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: small,
  });
  assert.is(res.status, 201);
  assert.is((await app.request('/api/v1/namespaces/default/pods/a')).status, 200);
  assert.is((await app.request('/api/v1/pods')).status, 200);
});

test.run();
