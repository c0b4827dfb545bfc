import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolveServeConfig } from '#lib/config.ts';

test('--cloud comes from the flag or OUTPOST_CLOUD_KUBECONFIG, as an absolute path; unset by default', () => {
  assert.is(resolveServeConfig({}, {}).cloud, undefined);
  assert.is(resolveServeConfig({}, { OUTPOST_CLOUD_KUBECONFIG: '/etc/outpost/kc' }).cloud, '/etc/outpost/kc');
  assert.is(resolveServeConfig({ cloud: '/a' }, { OUTPOST_CLOUD_KUBECONFIG: '/b' }).cloud, '/a');
  assert.match(resolveServeConfig({ cloud: 'kc.yaml' }, {}).cloud ?? '', /^\/.*\/kc\.yaml$/);
});

test.run();
