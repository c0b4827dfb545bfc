import { isAbsolute, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, parseListen, resolveServeConfig } from '#lib/config.ts';

test('a relative --data-dir becomes absolute: containerd resolves volume and log paths from its own cwd', () => {
  const cfg = resolveServeConfig({ dataDir: './data' }, {});
  assert.ok(isAbsolute(cfg.dataDir));
  assert.is(cfg.dataDir, join(process.cwd(), 'data'));
});

test("--data-dir ':memory:' is refused, not made into a directory of that name", () => {
  for (const [flags, env, named] of [
    [{ dataDir: ':memory:' }, {}, /^--data-dir: ':memory:' is not a directory/],
    [{}, { OUTPOST_DATA_DIR: ':memory:' }, /^OUTPOST_DATA_DIR=":memory:": ':memory:' is not a directory/],
  ] as const)
    assert.throws(
      () => resolveServeConfig(flags, env),
      (e: unknown) => e instanceof ConfigError && named.test((e as Error).message),
    );
});

test('flags win over OUTPOST_* variables, which win over defaults', () => {
  const cfg = resolveServeConfig(
    { listen: '127.0.0.1:1' },
    { OUTPOST_LISTEN: '127.0.0.1:2', OUTPOST_NODE_NAME: 'edge-9' },
  );
  assert.is(cfg.listen, '127.0.0.1:1');
  assert.is(cfg.nodeName, 'edge-9');
  assert.is(cfg.durability, 'full');
});

test('bad values are configuration errors naming the flag', () => {
  assert.throws(
    () => resolveServeConfig({ nodeName: 'Bad_Name' }, {}),
    (e: unknown) => e instanceof ConfigError && /--node-name/.test((e as Error).message),
  );
  assert.throws(
    () => parseListen('nope'),
    (e: unknown) => e instanceof ConfigError,
  );
  assert.throws(() => resolveServeConfig({ tlsCert: 'a.pem' }, {}), /--tls-cert and --tls-key go together/);
  assert.throws(() => resolveServeConfig({ clientCa: 'ca.pem' }, {}), /--client-ca needs TLS/);
  assert.equal(parseListen('[::1]:10550'), { host: '::1', port: 10550 });
});

test('the cloud link settings for fleets: lease duration and status report frequency', () => {
  const defaults = resolveServeConfig({}, {});
  assert.is(defaults.nodeLeaseDuration, 40_000);
  assert.is(defaults.nodeStatusReportFrequency, 300_000);
  const cfg = resolveServeConfig(
    { nodeLeaseDuration: '2m' },
    { OUTPOST_NODE_STATUS_REPORT_FREQUENCY: '10m' },
  );
  assert.is(cfg.nodeLeaseDuration, 120_000);
  assert.is(cfg.nodeStatusReportFrequency, 600_000);
  assert.throws(() => resolveServeConfig({ nodeLeaseDuration: '1s' }, {}), /--node-lease-duration/);
});

test.run();
