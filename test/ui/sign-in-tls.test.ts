// The dashboard's sign-in from another machine happens over https: the admin token must not cross
// the network in clear, in the form or in the cookie that then rides along with every request.
// Loopback keeps plain http (nothing crosses a network there).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nodeIPv4 } from '#lib/pods/runtime/node-ip.ts';
import { startTestAgent } from '../helpers/agent.ts';

test('from another address: the form redirects to https, a POST in clear is refused, https signs in', async () => {
  const ip = nodeIPv4();
  assert.ok(ip, 'this machine needs a non-loopback IPv4 address for this test');
  const agent = await startTestAgent({ flags: { listen: '0.0.0.0:0', anonymousRole: 'none' } });
  const tls = new Agent({ connect: { ca: readFileSync(join(agent.dataDir, 'auth', 'ca.crt')) } });
  try {
    const port = new URL(agent.url).port;
    const afar = `http://${ip}:${port}`;
    const form = await fetch(`${afar}/ui/login`, { redirect: 'manual' });
    assert.is(form.status, 308);
    assert.is(form.headers.get('location'), `https://${ip}:${port}/ui/login`);

    const inClear = await fetch(`${afar}/ui/login`, {
      method: 'POST',
      body: new URLSearchParams({ token: agent.token }),
      redirect: 'manual',
    });
    assert.is(inClear.status, 400);
    assert.is(inClear.headers.get('set-cookie'), null, 'no cookie that would carry the token in clear');
    assert.match(await inClear.text(), 'Sign in over https');

    const secure = `https://${ip}:${port}`;
    const page = await undiciFetch(`${secure}/ui/login`, { dispatcher: tls });
    assert.is(page.status, 200);
    const signIn = await undiciFetch(`${secure}/ui/login`, {
      method: 'POST',
      body: new URLSearchParams({ token: agent.token }),
      redirect: 'manual',
      dispatcher: tls,
    });
    assert.is(signIn.status, 303);
    assert.match(signIn.headers.get('set-cookie') ?? '', /; Secure/);

    // On loopback, plain http still shows the form.
    assert.is((await fetch(`${agent.url}/ui/login`, { redirect: 'manual' })).status, 200);
  } finally {
    await tls.close();
    await agent.stop();
  }
});

test.run();
