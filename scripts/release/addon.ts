// Cross-compiles better-sqlite3's native addon for one (architecture, Node.js) pair with Debian's
// toolchains and node-gyp (npm's own copy), against the headers of the registry's node-linux-<arch>
// package. Results are cached by (better-sqlite3 version, Node version, architecture).
import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { abiOf, CACHE, nodePackage, type Target } from './targets.ts';

/** The installed better-sqlite3 package: its folder and version. */
export function betterSqlite3(root: string): { dir: string; version: string } {
  const dir = join(root, 'node_modules/better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string };
  return { dir, version };
}

/** npm's bundled node-gyp (npm run sets npm_config_node_gyp; otherwise found beside npm-cli.js). */
function nodeGyp(): string {
  const fromNpm = process.env.npm_config_node_gyp;
  if (fromNpm && existsSync(fromNpm)) return fromNpm;
  const npm = spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim();
  const gyp = join(dirname(realpathSync(npm)), '../node_modules/node-gyp/bin/node-gyp.js');
  if (!existsSync(gyp)) throw new Error(`node-gyp not found beside ${npm}`);
  return gyp;
}

/** Where a compiled addon is cached. */
export function addonCachePath(target: Target, node: string, bsqVersion: string): string {
  return join(CACHE, 'addons', `better-sqlite3-${bsqVersion}-node-${node}-linux-${target.name}.node`);
}

/** A missing cross compiler, as the apt package that provides it (undefined when all are there). */
export function missingToolchain(target: Target): string | undefined {
  const gxx = `${target.triplet}-g++`;
  const found = spawnSync('sh', ['-c', `command -v ${gxx}`]).status === 0;
  if (found) return undefined;
  return target.name === 'x64' ? 'g++' : `g++-${target.triplet}`;
}

/**
 * Builds (or takes from the cache) the stripped addon for each of `nodes`; `progress` gets one line
 * per build step. One build folder per architecture: node-gyp is pointed at the headers through a
 * symlink whose path never changes, so SQLite's object (most of the compile time, and independent
 * of Node) is compiled once and reused for every ABI; only better-sqlite3's own C++ is rebuilt.
 */
export async function buildAddons(
  root: string,
  target: Target,
  nodes: string[],
  progress: (line: string) => void,
): Promise<Map<string, { path: string; cached: boolean }>> {
  const bsq = betterSqlite3(root);
  const results = new Map<string, { path: string; cached: boolean }>();
  const todo = nodes.filter((node) => {
    const out = addonCachePath(target, node, bsq.version);
    if (!existsSync(out)) return true;
    try {
      verifyAddon(out, target, node);
      results.set(node, { path: out, cached: true });
      return false;
    } catch {
      rmSync(out); // a bad cache entry is rebuilt
      return true;
    }
  });
  if (todo.length === 0) return results;
  mkdirSync(join(CACHE, 'addons'), { recursive: true });
  const work = mkdtempSync(join(CACHE, '.build-'));
  try {
    for (const f of ['binding.gyp', 'package.json', 'src', 'deps'])
      cpSync(join(bsq.dir, f), join(work, f), { recursive: true });
    const tools = target.triplet;
    // npm passes its config as npm_config_* variables, which node-gyp prefers to its own flags
    // (an npmrc's `nodedir=/usr` would compile against this machine's Node headers): drop them.
    const env: NodeJS.ProcessEnv = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_config_')),
    );
    Object.assign(env, { CC: `${tools}-gcc`, CXX: `${tools}-g++`, LINK: `${tools}-g++`, AR: `${tools}-ar` });
    const gyp = nodeGyp();
    const headers = join(work, 'node-headers');
    // SQLite's library is plain C that includes nothing of Node's: built for the first ABI, it is
    // linked as it is into the others. Make would otherwise compile it again, since each Node's
    // common.gypi changes the command line; `-o` tells make to keep the one it has.
    let sqliteBuilt = false;
    for (const node of todo) {
      const say = (line: string) => progress(`node ${node}: ${line}`);
      rmSync(headers, { force: true });
      symlinkSync(nodePackage(target, node), headers);
      await run(
        process.execPath,
        [gyp, 'configure', `--arch=${target.gypArch}`, `--nodedir=${headers}`],
        work,
        env,
        () => {},
      );
      // The previous ABI's C++ object and addon must not survive (their inputs' times say nothing).
      for (const f of ['obj.target/better_sqlite3', 'obj.target/better_sqlite3.node', 'better_sqlite3.node'])
        rmSync(join(work, 'build/Release', f), { recursive: true, force: true });
      say('configured');
      await run(
        'make',
        [
          '-C',
          'build',
          `-j${availableParallelism()}`,
          'BUILDTYPE=Release',
          ...(sqliteBuilt ? ['-o', 'Release/obj.target/deps/sqlite3.a'] : []),
          'better_sqlite3',
        ],
        work,
        env,
        (line) => {
          const step = /^\s*(CC|CXX|SOLINK_MODULE)\(target\) .*\/([^/]+)$/.exec(line);
          if (step) say(`${step[1] === 'SOLINK_MODULE' ? 'linking' : 'compiling'} ${step[2]}`);
        },
      );
      const stripped = join(work, 'stripped.node');
      await run(
        `${tools}-strip`,
        ['--strip-unneeded', '-o', stripped, 'build/Release/better_sqlite3.node'],
        work,
        env,
        () => {},
      );
      sqliteBuilt = true;
      verifyAddon(stripped, target, node);
      const out = addonCachePath(target, node, bsq.version);
      copyFileSync(stripped, `${out}.tmp`);
      renameSync(`${out}.tmp`, out);
      results.set(node, { path: out, cached: false });
    }
    return results;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const ELF_MACHINE = { x64: 62, arm64: 183, arm: 40 } as const;

/** Throws unless the addon is an ELF shared object for the target's CPU registered for `node`'s ABI. */
export function verifyAddon(file: string, target: Target, node: string): void {
  const bin = readFileSync(file);
  const machine = bin.readUInt16LE(18);
  if (bin.readUInt32BE(0) !== 0x7f454c46 || machine !== ELF_MACHINE[target.nodeArch])
    throw new Error(`${file}: not an ELF object for ${target.name} (e_machine ${machine})`);
  // NODE_MODULE_INIT exports node_register_module_v<NODE_MODULE_VERSION>.
  if (!bin.includes(`node_register_module_v${abiOf(node)}`))
    throw new Error(`${file}: not built for Node ${node} (ABI ${abiOf(node)})`);
}

/** Runs a command, handing each output line to `onLine`; rejects with the output's tail on failure. */
function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  onLine: (l: string) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let partial = '';
    const take = (d: Buffer) => {
      output = (output + d).slice(-20_000);
      const lines = (partial + d).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) onLine(l);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} failed (${code}):\n${output}`)),
    );
  });
}
