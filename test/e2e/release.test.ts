// The release tarballs on the boards they are for: each is unpacked, installed by its install.sh,
// and run with that architecture's Node (x64 natively; arm64 and armv7l under Debian's
// qemu-user-static), with no container runtime: the metabase is created and migrated, manifests load, the
// API answers reads and a watch, the reference DMI mapper (from the same tarball) registers, and a
// kill -9 and restart keep every pod, device and status. Emulation is slow: every wait polls for an
// outcome with a generous deadline; nothing asserts on how long anything took.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SCHEMA_VERSION } from '#db/open.ts';
import type { Device } from '#lib/kube/devices.ts';
import type { Pod } from '#lib/kube/types.ts';
import { missingToolchain } from '../../scripts/release/addon.ts';
import { abiOf, nodeCommand, TARGETS, type Target } from '../../scripts/release/targets.ts';
import { ci, waitFor } from '../helpers/lab.ts';
import { ensureBundle, type OutpostProcess, spawnOutpost } from '../helpers/outpost-process.ts';

const root = join(import.meta.dirname, '../..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
// Under emulation on a loaded 2-core machine a start takes tens of seconds; wait minutes.
const START_MS = 300_000;
/** What the release's chunks/ carries: the entry's chunks and the serve script's vendor files. */
const isChunk = (f: string) => f.endsWith('.mjs') || f.endsWith('.cjs');
const WAIT_MS = 180_000;

// Every architecture by default (npm test and CI); OUTPOST_RELEASE_TEST_ARCH=arm64,... narrows it
// for a quicker run while working on one.
const only = process.env.OUTPOST_RELEASE_TEST_ARCH?.split(',');
const targets = TARGETS.filter((t) => !only || only.includes(t.name));
const missing = [
  ...targets.map(missingToolchain),
  ...targets
    .flatMap((t) => (t.qemu ? [t.qemu] : []))
    .map((q) => (spawnSync('sh', ['-c', `command -v ${q}`]).status === 0 ? undefined : 'qemu-user-static')),
].filter(Boolean);

if (missing.length > 0) {
  const why = `apt packages missing: ${[...new Set(missing)].join(' ')}`;
  if (ci) {
    test('the release toolchains are installed', () => {
      throw new Error(why);
    });
  } else {
    process.stderr.write(`skipping test/e2e/release.test.ts: ${why}\n`);
    test.skip('release tarballs under emulation (no toolchains)', () => {});
  }
} else {
  const work = mkdtempSync(join(tmpdir(), 'outpost-rel-'));
  const out = join(work, 'release');
  const children = new Set<ChildProcess>();
  const outposts: OutpostProcess[] = [];

  // The release as `npm run release` writes it, into a folder of the test's own (the addons come
  // from ~/.cache/outpost after the first build; the first one compiles for minutes).
  ensureBundle();
  const built = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      'scripts/release.ts',
      '--out',
      out,
      '--no-build',
      '--arch',
      targets.map((t) => t.name).join(','),
    ],
    {
      cwd: root,
      stdio: ['ignore', 2, 2],
    },
  );

  test.after(async () => {
    for (const p of outposts) await p.kill9();
    for (const c of children) c.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  });

  test('npm run release writes a tarball per architecture and SHA256SUMS that sha256sum -c accepts', () => {
    assert.is(built.status, 0, 'scripts/release.ts failed (its output is above)');
    const sums = readFileSync(join(out, 'SHA256SUMS'), 'utf8');
    for (const t of targets) assert.match(sums, `  outpost-${version}-linux-${t.name}.tar.gz\n`);
    const check = spawnSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: out, encoding: 'utf8' });
    assert.is(check.status, 0, check.stdout + check.stderr);
    // One top folder, and in it what a board needs: an addon per Node ABI for that CPU.
    for (const t of targets) {
      const name = `outpost-${version}-linux-${t.name}`;
      const files = spawnSync('tar', ['tzf', join(out, `${name}.tar.gz`)], { encoding: 'utf8' }).stdout;
      assert.equal(
        [
          ...new Set(
            files
              .trim()
              .split('\n')
              .map((p) => p.split('/')[0]),
          ),
        ],
        [name],
      );
      const want = [
        'outpost.cjs',
        'outpost.mjs',
        'install.sh',
        'outpost.service',
        'node_modules/bindings/bindings.js',
      ];
      // The entry's chunks and the serve script's vendor files (scripts/build.mjs): every one the
      // build made, no source maps.
      for (const f of readdirSync(join(root, 'dist/chunks')))
        if (isChunk(f)) want.push(`chunks/${f}`);
        else assert.ok(!files.includes(`${name}/chunks/${f}\n`), `${f} is not in ${name}.tar.gz`);
      for (const node of t.nodes)
        want.push(
          `node_modules/better-sqlite3/lib/binding/node-v${abiOf(node)}-linux-${t.nodeArch}/better_sqlite3.node`,
        );
      for (const f of want) assert.ok(files.includes(`${name}/${f}\n`), `${f} is in ${name}.tar.gz`);
    }
  });

  for (const target of targets) for (const node of target.nodes) board(target, node);

  /** The whole life of one tarball on one Node: install, serve, read, watch, mapper, kill -9. */
  function board(target: Target, node: string): void {
    const label = `linux-${target.name} on Node ${node}${target.qemu ? ` (${target.qemu})` : ''}`;
    const dir = join(work, `${target.name}-${node.split('.')[0]}`); // short: unix socket paths live here
    const prefix = join(dir, 'opt/outpost');
    const config = join(dir, 'etc/outpost');
    const manifests = join(config, 'manifests');
    const dataDir = join(dir, 'data');
    const runtime = `unix://${join(dir, 'no-containerd.sock')}`;
    let cmd: string[] = [];
    let outpost: OutpostProcess | undefined;
    let listRv = '';

    // Each step says on stderr when it starts and how long it took: emulated, they take minutes.
    const step = (name: string, fn: () => void | Promise<void>) =>
      test(`${label}: ${name}`, async () => {
        const since = Date.now();
        process.stderr.write(`release test: ${label}: ${name}\n`);
        await fn();
        process.stderr.write(
          `release test: ${label}: done in ${Math.round((Date.now() - since) / 1000)} s\n`,
        );
      });
    const get = async <T>(path: string, accept = 'application/json') => {
      let res: Response;
      try {
        res = await fetch(outpost!.url + path, { headers: { accept } });
      } catch (e) {
        // undici says only "fetch failed": name the cause and what the agent logged.
        const cause = (e as Error & { cause?: Error }).cause?.message ?? '';
        throw new Error(`GET ${path}: ${(e as Error).message} (${cause}); outpost log:\n${outpost!.logs()}`);
      }
      return { status: res.status, body: (await res.json()) as T };
    };
    const pods = async () => (await get<{ items: Pod[] }>('/api/v1/pods')).body.items;
    const devices = async () =>
      (await get<{ items: Device[] }>('/apis/devices.kubeedge.io/v1beta1/devices')).body.items;
    const start = async (withManifests: boolean) => {
      outpost = await spawnOutpost({
        bundle: join(prefix, 'outpost.cjs'),
        node: cmd,
        dataDir,
        runtimeEndpoint: runtime,
        nodeName: `board-${target.name}`,
        ...(withManifests ? { manifests } : {}),
        startTimeoutMs: START_MS,
      });
      outposts.push(outpost);
    };

    step(`install.sh checks the addon loads, installs the bundle and points the unit at it`, () => {
      mkdirSync(dir, { recursive: true });
      const unpack = spawnSync('tar', [
        'xzf',
        join(out, `outpost-${version}-linux-${target.name}.tar.gz`),
        '-C',
        dir,
      ]);
      assert.is(unpack.status, 0, String(unpack.stderr));
      const c = nodeCommand(target, node);
      cmd = [c.cmd, ...c.args];
      // install.sh runs `$NODE`: a one-line wrapper stands for the board's node under emulation.
      const wrapper = join(dir, 'node');
      writeFileSync(wrapper, `#!/bin/sh\nexec ${cmd.join(' ')} "$@"\n`);
      chmodSync(wrapper, 0o755);
      const install = spawnSync('sh', [join(dir, `outpost-${version}-linux-${target.name}/install.sh`)], {
        encoding: 'utf8',
        env: {
          ...process.env,
          NODE: wrapper,
          OUTPOST_PREFIX: prefix,
          OUTPOST_UNIT_DIR: join(dir, 'systemd'),
          OUTPOST_CONFIG_DIR: config,
        },
      });
      assert.is(install.status, 0, install.stdout + install.stderr);
      assert.match(install.stdout, `installed Outpost v${version} in ${prefix}`);
      const unit = readFileSync(join(dir, 'systemd/outpost.service'), 'utf8');
      assert.match(
        unit,
        `ExecStart=${wrapper} $OUTPOST_V8_FLAGS ${prefix}/outpost.cjs serve --data-dir /var/lib/outpost --manifests ${manifests}\n`,
      );
      assert.ok(
        existsSync(
          join(
            prefix,
            `node_modules/better-sqlite3/lib/binding/node-v${abiOf(node)}-linux-${target.nodeArch}`,
          ),
        ),
      );
      writeFileSync(
        join(manifests, 'pods.yaml'),
        [pod('web', 'default', 'app: web'), pod('sensor', 'edge', 'app: sensor')].join('---\n'),
      );
      writeFileSync(join(manifests, 'devices.yaml'), DEVICES);
    });

    // The shell logic is the same on every board: checked once, on the machine's own architecture.
    if (!target.qemu)
      step(`install.sh over an install keeps the previous release's chunks, one release back`, () => {
        const reinstall = () => {
          const r = spawnSync('sh', [join(dir, `outpost-${version}-linux-${target.name}/install.sh`)], {
            encoding: 'utf8',
            env: {
              ...process.env,
              NODE: join(dir, 'node'),
              OUTPOST_PREFIX: prefix,
              OUTPOST_UNIT_DIR: join(dir, 'systemd'),
              OUTPOST_CONFIG_DIR: config,
            },
          });
          assert.is(r.status, 0, r.stdout + r.stderr);
        };
        // A previous release whose agent still runs and may import its own chunk-OLD.mjs.
        writeFileSync(join(prefix, 'chunks/chunk-OLD.mjs'), 'export {};\n');
        writeFileSync(
          join(prefix, 'chunks.list'),
          `chunk-OLD.mjs\n${readFileSync(join(prefix, 'chunks.list'))}`,
        );
        reinstall();
        assert.ok(existsSync(join(prefix, 'chunks/chunk-OLD.mjs')), "the previous release's chunk is kept");
        assert.ok(!readFileSync(join(prefix, 'chunks.list'), 'utf8').includes('chunk-OLD.mjs'));
        reinstall();
        assert.ok(!existsSync(join(prefix, 'chunks/chunk-OLD.mjs')), 'two releases back is gone');
        for (const f of readdirSync(join(root, 'dist/chunks')))
          if (isChunk(f)) assert.ok(existsSync(join(prefix, 'chunks', f)), f);
      });

    step(`the serve script's vendor files load with the board's Node`, () => {
      // Required only when serve first uses mqtt, ws, proto-loader or yaml: loaded here from the install.
      const vendor = readdirSync(join(prefix, 'chunks')).filter((f) => /^vendor-.*\.cjs$/.test(f));
      assert.equal(vendor.map((f) => f.replace(/-[A-Z0-9]+\.cjs$/, '')).sort(), [
        'vendor-grpc-proto-loader',
        'vendor-mqtt',
        'vendor-ws',
        'vendor-yaml',
      ]);
      // A function each package's require gives, in the order of the sorted names above.
      const has = ['loadSync', 'connect', 'WebSocketServer', 'parse'];
      const files = [...vendor].sort();
      const code = `const dir = process.argv[1];
const got = ${JSON.stringify(files)}.map((f, i) => typeof require(dir + '/' + f)[${JSON.stringify(has)}[i]]);
process.stdout.write(JSON.stringify(got));`;
      const r = spawnSync(cmd[0]!, [...cmd.slice(1), '-e', code, join(prefix, 'chunks')], {
        encoding: 'utf8',
        timeout: WAIT_MS,
      });
      assert.is(r.status, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout), ['function', 'function', 'function', 'function']);
    });

    step(`the metabase is created and migrated, the manifests load`, async () => {
      await start(true);
      const v = await get<{ platform: string; goVersion: string }>('/version');
      assert.is(v.body.platform, `linux/${target.nodeArch}`);
      assert.is(v.body.goVersion, `node${node}`);
      const loaded = await waitFor(async () => {
        const names = (await pods()).map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
        return names.length === 2 && (await devices()).length === 1 ? names : undefined;
      }, WAIT_MS);
      assert.equal(loaded?.sort(), ['default/web', 'edge/sensor']);
      const db = new Database(join(dataDir, 'outpost.db'), { readonly: true, fileMustExist: true });
      try {
        assert.is(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
      } finally {
        db.close();
      }
    });

    step(`the API answers reads, Tables, Status errors and a watch`, async () => {
      const web = await get<Pod>('/api/v1/namespaces/default/pods/web');
      assert.is(web.status, 200);
      assert.is(web.body.spec.nodeName, `board-${target.name}`);
      const missingPod = await get<{ kind: string; reason: string }>('/pods/default/missing');
      assert.equal(
        [missingPod.status, missingPod.body.kind, missingPod.body.reason],
        [404, 'Status', 'NotFound'],
      );
      const table = await get<{ kind: string; rows: { cells: unknown[] }[] }>(
        '/api/v1/namespaces/edge/pods',
        'application/json;as=Table;v=v1;g=meta.k8s.io',
      );
      assert.equal([table.body.kind, table.body.rows[0]?.cells[0]], ['Table', 'sensor']);
      const list = await get<{ metadata: { resourceVersion: string } }>(
        '/api/v1/pods?labelSelector=app%3Dweb',
      );
      listRv = list.body.metadata.resourceVersion;
      // A watch from the list's resourceVersion sees a manifest edited afterwards.
      const seen = watchFor(`${outpost!.url}/api/v1/pods?watch=true&resourceVersion=${listRv}`, (e) =>
        e.type === 'MODIFIED' && e.object.metadata.labels?.tier === 'front' ? e : undefined,
      );
      writeFileSync(
        join(manifests, 'pods.yaml'),
        [pod('web', 'default', 'app: web, tier: front'), pod('sensor', 'edge', 'app: sensor')].join('---\n'),
      );
      const event = await seen;
      assert.equal([event.object.metadata.namespace, event.object.metadata.name], ['default', 'web']);
    });

    step(`the reference DMI mapper registers and reports the device`, async () => {
      const mapper = spawn(
        cmd[0]!,
        [
          ...cmd.slice(1),
          join(prefix, 'outpost.cjs'),
          'mapper',
          'virtual',
          '--socket',
          join(dir, 'mapper.sock'),
          '--outpost-dmi',
          join(dataDir, 'dmi.sock'),
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      children.add(mapper);
      let logs = '';
      mapper.stderr!.on('data', (d) => {
        logs += d;
      });
      // An emulated agent under a loaded machine can miss a poll while the mapper registers: an
      // error counts as "not yet", and the last one is shown if the deadline passes.
      let lastError = '';
      const twin = await waitFor(async () => {
        const d = await devices().then(
          (items) => items[0],
          (e: Error) => {
            lastError = e.message;
            return undefined;
          },
        );
        const t = d?.status?.twins?.find((x) => x.propertyName === 'temperature');
        return d?.status?.state === 'ok' && t?.reported?.value ? t.reported.value : undefined;
      }, WAIT_MS);
      mapper.kill('SIGKILL');
      assert.is(
        twin,
        '18',
        `the mapper reported the device's ambient temperature; last error: ${lastError}; mapper log:\n${logs}`,
      );
      const table = await get<{ rows: { cells: unknown[] }[] }>(
        '/apis/devices.kubeedge.io/v1beta1/devices',
        'application/json;as=Table;v=v1;g=meta.k8s.io',
      );
      assert.ok(table.body.rows[0]?.cells.includes('virtual-mapper'), JSON.stringify(table.body.rows));
    });

    step(`kill -9 and a restart keep every pod, device and status`, async () => {
      // Settled first: every pod carries the runtime-unreachable condition.
      const before = await waitFor(async () => {
        const items = await pods();
        const settled = items.every((p) =>
          p.status?.conditions?.some((c) => c.type === 'outpost.io/RuntimeReachable' && c.status === 'False'),
        );
        return items.length === 2 && settled ? items : undefined;
      }, WAIT_MS);
      assert.ok(before, 'both pods, each with its RuntimeReachable=False condition');
      const devicesBefore = await devices();
      await outpost!.kill9();
      // Without --manifests: whatever is served now comes from the metabase alone.
      await start(false);
      const after = await waitFor(async () => {
        const items = await pods();
        return JSON.stringify(items) === JSON.stringify(before) ? items : undefined;
      }, WAIT_MS);
      assert.equal(after ?? (await pods()), before);
      assert.equal(await devices(), devicesBefore);
      await outpost!.kill9();
    });
  }

  /** Reads a watch until `pick` returns something for an event; fails after WAIT_MS. */
  async function watchFor<T>(
    url: string,
    pick: (e: { type: string; object: Pod }) => T | undefined,
  ): Promise<T> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), WAIT_MS);
    try {
      const res = await fetch(url, { signal: abort.signal });
      const decoder = new TextDecoder();
      let buf = '';
      for await (const chunk of res.body!) {
        buf += decoder.decode(chunk as Uint8Array, { stream: true });
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          const found = pick(JSON.parse(buf.slice(0, nl)));
          buf = buf.slice(nl + 1);
          if (found !== undefined) return found;
        }
      }
      throw new Error('the watch ended');
    } finally {
      clearTimeout(timer);
      abort.abort();
    }
  }
}

test.run();

function pod(name: string, namespace: string, labels: string): string {
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\n  labels: {${labels}}\nspec:\n  containers: [{name: main, image: busybox}]\n`;
}

const DEVICES = `apiVersion: devices.kubeedge.io/v1beta1
kind: DeviceModel
metadata:
  name: thermometer-model
spec:
  protocol: virtual
  properties:
    - name: temperature
      type: FLOAT
      accessMode: ReadOnly
---
apiVersion: devices.kubeedge.io/v1beta1
kind: Device
metadata:
  name: thermometer
spec:
  deviceModelRef:
    name: thermometer-model
  protocol:
    protocolName: virtual
    configData:
      ambient: 18
  properties:
    - name: temperature
      reportCycle: 200000000
`;
