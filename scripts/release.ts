// `npm run release`: one build, then per architecture a tarball with the bundle (the entries
// outpost.cjs and outpost.mjs and their chunks/*.mjs and *.cjs, scripts/build.mjs), better-sqlite3's
// addon cross-compiled for each supported Node ABI, the systemd unit and the install script:
// release/outpost-<version>-linux-<arch>.tar.gz and release/SHA256SUMS.
//
//   npm run release [-- --out DIR] [--arch arm64,armv7l] [--no-build]
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { betterSqlite3, buildAddons, missingToolchain } from './release/addon.ts';
import { abiOf, TARGETS, type Target } from './release/targets.ts';

const root = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const out = resolve(opt('--out') ?? join(root, 'release'));
const only = opt('--arch')?.split(',');
const targets = TARGETS.filter((t) => !only || only.includes(t.name));
if (targets.length === 0) throw new Error(`--arch: none of ${only} (known: ${TARGETS.map((t) => t.name)})`);
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
const log = (line: string) => process.stderr.write(`release: ${line}\n`);
const started = Date.now();
const secs = (since: number) => `${Math.round((Date.now() - since) / 1000)} s`;

const missing = [...new Set(targets.map(missingToolchain).filter(Boolean))];
if (missing.length) {
  log(`missing cross compilers; install them with: apt-get install ${missing.join(' ')}`);
  process.exit(1);
}

if (!args.includes('--no-build')) {
  const b = spawnSync(process.execPath, ['scripts/build.mjs'], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (b.status !== 0) process.exit(b.status ?? 1);
}
const bundle = join(root, 'dist/outpost.mjs');
if (!existsSync(bundle)) throw new Error('dist/outpost.mjs is missing: run npm run build');
const nodeEntry = join(root, 'dist/outpost.cjs');
// The chunks the entry imports, statically or when a command needs them, and the vendor files the
// serve script requires when it first uses their package (*.cjs); no source maps.
const chunksDir = join(root, 'dist/chunks');
const chunks = readdirSync(chunksDir).filter((f) => f.endsWith('.mjs') || f.endsWith('.cjs'));

// Addons: one build per architecture (each compiles SQLite once, then better-sqlite3 per Node ABI),
// as many at once as there are cores; a cold build takes minutes, so progress is printed per step
// and every 30 s.
const running = new Map<string, number>();
const ticker = setInterval(() => {
  if (running.size) log(`still compiling: ${[...running].map(([l, s]) => `${l} (${secs(s)})`).join(', ')}`);
}, 30_000);
const addons = new Map<string, string>();
const queue = [...targets];
const cores = Math.max(1, Math.min(queue.length, availableParallelism()));
try {
  await Promise.all(
    Array.from({ length: cores }, async () => {
      for (let t = queue.shift(); t; t = queue.shift()) {
        const since = Date.now();
        running.set(t.name, since);
        const built = await buildAddons(root, t, t.nodes, (line) => log(`[${t.name}] ${line}`));
        running.delete(t.name);
        for (const [node, r] of built) {
          log(
            `[${t.name}] node ${node}: ${r.cached ? 'addon from the cache' : `addon built (${t.name} took ${secs(since)})`}`,
          );
          addons.set(`${t.name} node ${node}`, r.path);
        }
      }
    }),
  );
} finally {
  clearInterval(ticker);
}

// One folder per architecture, packed reproducibly (sorted, root-owned, the commit's time).
const stage = join(out, '.stage');
rmSync(stage, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });
const epoch =
  process.env.SOURCE_DATE_EPOCH ??
  (spawnSync('git', ['log', '-1', '--format=%ct'], { cwd: root, encoding: 'utf8' }).stdout.trim() ||
    String(Math.floor(Date.now() / 1000)));
const bsq = betterSqlite3(root);
const requireFrom = (dir: string) => createRequire(join(dir, 'package.json'));
const bindingsDir = dirname(requireFrom(bsq.dir).resolve('bindings/package.json'));
const fileUriDir = dirname(requireFrom(bindingsDir).resolve('file-uri-to-path/package.json'));

const sums: string[] = [];
const sizes: string[] = [];
for (const t of targets) {
  const name = `outpost-${version}-linux-${t.name}`;
  const dir = join(stage, name);
  stageFolder(t, dir);
  const tar = spawnSync(
    'tar',
    [
      '--sort=name',
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      `--mtime=@${epoch}`,
      '-C',
      stage,
      '-cf',
      '-',
      name,
    ],
    { maxBuffer: 1 << 30 },
  );
  if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
  const file = `${name}.tar.gz`;
  const gz = gzipSync(tar.stdout, { level: 9 });
  writeFileSync(join(out, file), gz);
  sums.push(`${createHash('sha256').update(gz).digest('hex')}  ${file}`);
  sizes.push(
    `${file} ${(gz.length / 1024 / 1024).toFixed(2)} MiB (unpacked ${(tar.stdout.length / 1024 / 1024).toFixed(2)} MiB)`,
  );
}
rmSync(stage, { recursive: true, force: true });
writeFileSync(join(out, 'SHA256SUMS'), `${sums.join('\n')}\n`);
for (const s of sizes) log(s);
log(`wrote ${out}/SHA256SUMS; done in ${secs(started)}`);

/** The tarball's one folder: bundle (entry and chunks), unit, install script, and a minimal better-sqlite3. */
function stageFolder(t: Target, dir: string): void {
  const mod = join(dir, 'node_modules');
  mkdirSync(mod, { recursive: true });
  mkdirSync(join(dir, 'chunks'));
  copyFileSync(bundle, join(dir, 'outpost.mjs'));
  copyFileSync(nodeEntry, join(dir, 'outpost.cjs'));
  for (const f of chunks) copyFileSync(join(chunksDir, f), join(dir, 'chunks', f));
  copyFileSync(join(root, 'deploy/outpost.service'), join(dir, 'outpost.service'));
  copyFileSync(join(root, 'deploy/install.sh'), join(dir, 'install.sh'));
  chmodSync(join(dir, 'outpost.mjs'), 0o755);
  chmodSync(join(dir, 'outpost.cjs'), 0o755);
  chmodSync(join(dir, 'install.sh'), 0o755);
  // better-sqlite3 finds its addon through `bindings`, which looks in
  // lib/binding/node-v<ABI>-<platform>-<arch>/: one folder per Node ABI picks the right one at start.
  const pkg = join(mod, 'better-sqlite3');
  for (const f of ['package.json', 'LICENSE', 'lib'])
    cpSync(join(bsq.dir, f), join(pkg, f), { recursive: true });
  for (const node of t.nodes) {
    const to = join(pkg, 'lib/binding', `node-v${abiOf(node)}-linux-${t.nodeArch}`);
    mkdirSync(to, { recursive: true });
    copyFileSync(addons.get(`${t.name} node ${node}`)!, join(to, 'better_sqlite3.node'));
  }
  // Their code, manifest and licence only (no tests, no docs).
  const runtimeOnly = (src: string) =>
    !/[\\/](test|[^\\/]*\.md|[^\\/]*\.d\.ts)$/.test(src) || /LICENSE/.test(src);
  cpSync(bindingsDir, join(mod, 'bindings'), { recursive: true, filter: runtimeOnly });
  cpSync(fileUriDir, join(mod, 'file-uri-to-path'), { recursive: true, filter: runtimeOnly });
}
