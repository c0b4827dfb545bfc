// The dashboard's sections through app.request: what the summary says about the cloud link and the
// MQTT broker, and who may read which section.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { CloudContext } from '#lib/cloud/context.ts';
import { testApp } from '../helpers/app.ts';

const cloud = {
  server: 'https://cloud.example:6443',
  link: {
    snapshot: () => ({
      state: 'offline',
      lastError: 'connect ECONNREFUSED',
      lastContact: undefined,
      since: 0,
    }),
  },
} as unknown as CloudContext;

test('the summary shows the cloud link and the MQTT broker as conditions', async () => {
  const { app } = testApp({
    cloud,
    mqtt: () => ({ broker: 'mqtt://broker:1883', connected: true, since: 0, published: 3, topics: 9 }),
    health: () => [{ name: 'api', state: 'running', critical: true, restarts: 0, since: 0 }],
  });
  const res = await app.request('/ui/parts/summary');
  assert.is(res.status, 200);
  const html = await res.text();
  assert.match(
    html,
    /data-condition="CloudLinkOnline"><td>CloudLinkOnline<\/td><td class="bad">False<\/td><td>offline: connect ECONNREFUSED<\/td>/,
  );
  assert.match(
    html,
    /data-condition="MqttConnected"><td>MqttConnected<\/td><td class="ok">True<\/td><td>mqtt:\/\/broker:1883<\/td>/,
  );
  assert.match(html, 'cloud https://cloud.example:6443 (offline)');
});

test('unknown sections are 404 Status; the page without a trailing slash redirects', async () => {
  const { app } = testApp();
  const res = await app.request('/ui/parts/nope');
  assert.is(res.status, 404);
  assert.is(((await res.json()) as { reason: string }).reason, 'NotFound');
  const page = await app.request('/ui');
  assert.equal([page.status, page.headers.get('location')], [301, '/ui/']);
  const full = await app.request('/ui/');
  assert.match(await full.text(), '<script src="/ui/app.js"');
});

test.run();
