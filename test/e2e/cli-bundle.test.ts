// The `outpost` CLI as the bundle runs it (`node dist/outpost.cjs ...`, Node's entry, which hands
// dist/outpost.mjs and the chunks each command imports what it does not answer itself,
// docs/architecture.md#the-bundle), against the bundle's agent
// with no container runtime: the answers that need no command line, the admin credential found in
// the data directory (through its unix socket, or https when nothing listens there; a call only
// an admin may make), the output formats, and the errors.
// The other CLI suites run bin/outpost.ts from source; this one catches what only the build
// changes (a chunk not loading, a lazily imported package that behaves differently when bundled).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { waitFor } from '../helpers/lab.ts';
import {
  ensureBundle,
  ensureEsmEntry,
  type OutpostProcess,
  spawnOutpost,
} from '../helpers/outpost-process.ts';

const root = join(import.meta.dirname, '../..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
const dir = mkdtempSync(join(tmpdir(), 'outpost-cli-bundle-'));
const dataDir = join(dir, 'data');
const manifests = join(dir, 'manifests');
const NS = 'clib';
let agent: OutpostProcess | undefined;
let bundle = '';

/** `node dist/outpost.cjs ARGS` with the agent's data directory (its admin kubeconfig) and a fresh HOME. */
const cli = (args: string[], env: Record<string, string> = {}) => {
  const r = spawnSync(process.execPath, [bundle, ...args], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, HOME: dir, OUTPOST_DATA_DIR: dataDir, ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};
const show = (r: ReturnType<typeof cli>) => `exit ${r.code}\n${r.stdout}${r.stderr}`;

test.before(async () => {
  bundle = ensureBundle();
  mkdirSync(manifests, { recursive: true });
  writeFileSync(
    join(manifests, 'pods.yaml'),
    ['web', 'db']
      .map(
        (name) =>
          `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: ${NS}, labels: {app: ${name}}}\nspec: {containers: [{name: main, image: busybox:1.36}]}\n`,
      )
      .join('---\n'),
  );
  agent = await spawnOutpost({
    dataDir,
    manifests,
    runtimeEndpoint: `unix://${join(dir, 'no-runtime.sock')}`,
    nodeName: 'cli-bundle',
    startTimeoutMs: 120_000,
  });
  const loaded = await waitFor(async () => {
    const res = await fetch(`${agent!.url}/api/v1/namespaces/${NS}/pods`).catch(() => undefined);
    const items = res?.ok ? ((await res.json()) as { items: unknown[] }).items : [];
    return items.length === 2;
  }, 120_000);
  assert.ok(loaded, `the manifests' two pods are listed:\n${agent.logs()}`);
});

test.after(async () => {
  await agent?.kill9();
  rmSync(dir, { recursive: true, force: true });
});

test('--version and version --client answer without a server', () => {
  const v = cli(['--version']);
  assert.equal([v.code, v.stdout], [0, `${version}\n`], show(v));
  const c = cli(['version', '--client']);
  assert.equal([c.code, c.stdout], [0, `Client Version: v${version}\n`], show(c));
});

test("Node's entry (outpost.cjs) runs --version and serve without Node's ES module loader; outpost.mjs loads it", async () => {
  // Which of Node's own modules a process loaded, written when it exits.
  const probe = join(dir, 'modules.cjs');
  writeFileSync(
    probe,
    "process.on('exit', () => require('node:fs').writeFileSync(__dirname + '/modules-' + process.pid + '.txt', process.moduleLoadList.join('\\n')));\n",
  );
  const esmLoader = (pid: number) =>
    readFileSync(join(dir, `modules-${pid}.txt`), 'utf8').includes(
      'NativeModule internal/modules/esm/module_job',
    );
  const { NODE_OPTIONS: _, ...env } = process.env;
  for (const [entry, esm] of [
    [bundle, false],
    [ensureEsmEntry(), true],
  ] as const) {
    const r = spawnSync(process.execPath, ['-r', probe, entry, '--version'], { encoding: 'utf8', env });
    assert.equal([r.status, r.stdout], [0, `${version}\n`], `${entry}: ${r.stderr}`);
    assert.is(esmLoader(r.pid), esm, entry);
  }
  const served = await spawnOutpost({
    dataDir: join(dir, 'probe-data'),
    runtimeEndpoint: `unix://${join(dir, 'no-runtime.sock')}`,
    nodeName: 'probe',
    node: [process.execPath, '-r', probe],
    startTimeoutMs: 120_000,
  });
  const res = await fetch(`${served.url}/api/v1/pods`);
  assert.is(res.status, 200, served.logs());
  assert.is(await served.term(), 0, served.logs());
  assert.not.ok(esmLoader(served.pid), 'serve from outpost.cjs loaded the ES module loader');
});

test('version asks the server; get pods -A prints the table', () => {
  const v = cli(['version', '-s', agent!.url]);
  assert.is(v.code, 0, show(v));
  assert.match(v.stdout, `Client Version: v${version}\nServer Version: v1.`);
  for (const args of [
    ['get', 'pods', '-A'],
    ['ctl', 'get', 'pods', '-A'],
  ]) {
    const r = cli([...args, '-s', agent!.url]);
    assert.is(r.code, 0, show(r));
    const lines = r.stdout.trim().split('\n');
    assert.match(lines[0]!, /^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    assert.equal(
      lines
        .slice(1)
        .map((l) => l.split(/\s+/).slice(0, 2).join('/'))
        .sort(),
      [`${NS}/db`, `${NS}/web`],
    );
  }
});

test("the data directory's admin credential is used (over https): audit, an admin-only call, answers", () => {
  const r = cli(['audit', '-s', agent!.url]);
  assert.is(r.code, 0, show(r));
  // Without it (another data directory), the same call is refused.
  const anonymous = cli(['audit', '-s', agent!.url], { OUTPOST_DATA_DIR: join(dir, 'elsewhere') });
  assert.is(anonymous.code, 1, show(anonymous));
  assert.match(anonymous.stderr, 'Error from server (Forbidden)');
});

test("the same credential over https when nothing listens on the data directory's socket", () => {
  // A copy of the credential beside a socket file nobody listens on (an agent killed with -9).
  const copy = join(dir, 'stale');
  mkdirSync(join(copy, 'auth'), { recursive: true });
  copyFileSync(join(dataDir, 'auth', 'admin.kubeconfig'), join(copy, 'auth', 'admin.kubeconfig'));
  writeFileSync(join(copy, 'outpost.sock'), '');
  const r = cli(['audit', '-s', agent!.url], { OUTPOST_DATA_DIR: copy });
  assert.is(r.code, 0, show(r));
});

test('-o yaml, -o json, -o name and a label selector', () => {
  const y = cli(['get', 'pods', '-n', NS, '-o', 'yaml', '-s', agent!.url]);
  assert.is(y.code, 0, show(y));
  const list = parse(y.stdout) as { kind: string; items: { metadata: { name: string } }[] };
  assert.equal([list.kind, list.items.map((p) => p.metadata.name).sort()], ['List', ['db', 'web']]);
  const j = cli(['get', 'pod', 'web', '-n', NS, '-o', 'json', '-s', agent!.url]);
  assert.is(j.code, 0, show(j));
  assert.is((JSON.parse(j.stdout) as { metadata: { name: string } }).metadata.name, 'web');
  const n = cli(['get', 'pods', '-n', NS, '-l', 'app=db', '-o', 'name', '-s', agent!.url]);
  assert.equal([n.code, n.stdout], [0, 'pod/db\n'], show(n));
});

test('global flags before the command, as kubectl takes them: --kubeconfig, -n, -s, --server=', () => {
  // Another data directory, so only --kubeconfig can make the admin-only audit answer.
  const elsewhere = { OUTPOST_DATA_DIR: join(dir, 'elsewhere') };
  const kubeconfig = join(dataDir, 'auth', 'admin.kubeconfig');
  for (const args of [
    ['--kubeconfig', kubeconfig, 'audit'],
    ['audit', '--kubeconfig', kubeconfig],
  ]) {
    const r = cli(args, elsewhere);
    assert.is(r.code, 0, show(r));
  }
  const names = (r: ReturnType<typeof cli>) => {
    assert.is(r.code, 0, show(r));
    return r.stdout;
  };
  for (const args of [
    ['--kubeconfig', kubeconfig, '-n', NS, 'get', 'pods', '-o', 'name'],
    ['-n', NS, '--kubeconfig', kubeconfig, 'ctl', 'get', 'pods', '-o', 'name'],
    ['get', '-n', NS, 'pods', '-o', 'name', '--kubeconfig', kubeconfig],
    ['-s', agent!.url, `--namespace=${NS}`, 'get', 'pods', '-o', 'name'],
    [`--server=${agent!.url}`, `-n${NS}`, 'get', 'pods', '-o', 'name'],
  ]) {
    assert.is(names(cli(args, elsewhere)), 'pod/db\npod/web\n', args.join(' '));
  }
  const d = cli(['-n', NS, '-s', agent!.url, 'describe', 'pod', 'web']);
  assert.is(d.code, 0, show(d));
  assert.match(d.stdout, new RegExp(`^Namespace:\\s+${NS}$`, 'm'));
  // A flag no command takes is still refused, before the command as after it.
  const unknown = cli(['--no-such-flag', 'get', 'pods']);
  assert.is(unknown.code, 2, show(unknown));
  assert.match(unknown.stderr, "unknown option '--no-such-flag'");
});

test('describe prints the pod', () => {
  const r = cli(['describe', 'pod', 'web', '-n', NS, '-s', agent!.url]);
  assert.is(r.code, 0, show(r));
  assert.match(r.stdout, /^Name:\s+web$/m);
  assert.match(r.stdout, new RegExp(`^Namespace:\\s+${NS}$`, 'm'));
});

test('errors: a missing pod (1), a bad flag or format (2), a refused connection (1)', () => {
  const missing = cli(['get', 'pod', 'nope', '-n', NS, '-s', agent!.url]);
  assert.is(missing.code, 1, show(missing));
  assert.match(missing.stderr, 'Error from server (NotFound): pods "nope" not found');
  const flag = cli(['get', 'pods', '--no-such-flag']);
  assert.is(flag.code, 2, show(flag));
  assert.match(flag.stderr, "unknown option '--no-such-flag'");
  const format = cli(['get', 'pods', '-o', 'toml', '-s', agent!.url]);
  assert.is(format.code, 2, show(format));
  assert.match(format.stderr, 'unable to match a printer suitable for the output format "toml"');
  const refused = cli(['get', 'pods', '-s', 'http://127.0.0.1:1'], {
    OUTPOST_DATA_DIR: join(dir, 'elsewhere'),
  });
  assert.is(refused.code, 1, show(refused));
  assert.match(refused.stderr, 'The connection to the server 127.0.0.1:1 was refused');
});

test("the bundle's /metrics has Node's process metrics (prom-client with the build's stubs)", async () => {
  const res = await fetch(`${agent!.url}/metrics`);
  assert.is(res.status, 200);
  const text = await res.text();
  for (const name of [
    'process_cpu_seconds_total',
    'process_resident_memory_bytes',
    'nodejs_eventloop_lag_seconds',
  ])
    assert.match(text, new RegExp(`^${name} \\d`, 'm'), name);
});

test.run();
