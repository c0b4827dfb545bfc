// `outpost serve` on Node runs from the serve script (lib/cli/serve-script.ts bundled as one
// script, scripts/build.mjs), compiled with a V8 code cache: Node 20 has no compile cache for ES
// modules, and its start spent most of its time compiling the bundle. The cache is written once the
// agent has started and answered its first request (AgentOptions.onWarm), so it holds the functions
// that ran, not only the ones V8 compiles eagerly; the next start deserializes them instead of
// compiling them (docs/performance.md#start-up). A cache that is missing, unreadable, not the
// user's own or rejected by V8 (another Node, V8 flags or build) costs nothing but that compile,
// and is written anew.
import { createRequire } from 'node:module';
import { builtinFlagWindow, preloadLazyBuiltins, withBuiltinCaches } from './builtin-flags.ts';
import type { ServeHooks } from './serve-command.ts';

// Node's modules through require, not import: their ES module facades cost every start 1-4 ms
// more (node:fs, node:path, node:url, node:vm; docs/performance.md#start-up).
const load = createRequire(import.meta.url);
const {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} = load('node:fs') as typeof import('node:fs');
const { basename, dirname, join } = load('node:path') as typeof import('node:path');
const { fileURLToPath, pathToFileURL } = load('node:url') as typeof import('node:url');
const { Script } = load('node:vm') as typeof import('node:vm');

/** What the serve script exports (lib/cli/serve-script.ts). */
type ServeMain = (argv: string[], hooks: ServeHooks) => Promise<void>;

/** Caches of other builds kept beside the current one (several checkouts or releases may alternate). */
const KEEP_OTHERS = 3;

/**
 * Where code caches are kept: OUTPOST_CODE_CACHE (a directory, or `off`), else the unit's cache
 * directory (systemd's CACHE_DIRECTORY, /var/cache/outpost), else $XDG_CACHE_HOME/outpost or
 * ~/.cache/outpost; undefined when there is none.
 */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const set = env.OUTPOST_CODE_CACHE;
  if (set !== undefined) return set === '' || set === 'off' ? undefined : set;
  // systemd lists one directory per CacheDirectory= entry, separated by colons.
  if (env.CACHE_DIRECTORY) return env.CACHE_DIRECTORY.split(':')[0];
  const base = env.XDG_CACHE_HOME || (env.HOME ? join(env.HOME, '.cache') : undefined);
  return base ? join(base, 'outpost') : undefined;
}

/** The cache file of `script` (named by its content hash) for this Node version and CPU. */
export function codeCacheFile(dir: string, script: string): string {
  return join(dir, `${basename(script).replace(/\.m?js$/, '')}-node${process.version}-${process.arch}.v8`);
}

/**
 * The cache's bytes when the file is the current user's own and no one else may write it (V8 runs
 * what a cache holds: one planted by another user would run as the agent); undefined otherwise.
 */
export function readOwnCache(file: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const st = fstatSync(fd);
    if (!st.isFile() || st.uid !== process.getuid?.() || (st.mode & 0o022) !== 0) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Writes a cache atomically (readers see the old file or the new one) and prunes other builds'
 * caches and the temporary files of writes that were killed.
 */
export function writeCache(file: string, data: Buffer): void {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    // Created anew, never through a link another user left at that name.
    rmSync(tmp, { force: true });
    writeFileSync(tmp, data, { mode: 0o600, flag: 'wx' });
    renameSync(tmp, file);
  } finally {
    rmSync(tmp, { force: true });
  }
  const names = readdirSync(dir);
  removeStaleTemporaries(dir, names);
  const prefix = basename(file).replace(/-[^-]+-node.*$/, '-');
  const others = names
    .filter((f) => f.startsWith(prefix) && f.endsWith('.v8') && f !== basename(file))
    .map((f) => ({ f, at: statSync(join(dir, f)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const { f } of others.slice(KEEP_OTHERS)) rmSync(join(dir, f), { force: true });
}

/** How old a temporary file of a live process may be before it is taken for a leftover: a write takes milliseconds. */
const STALE_TMP_MS = 60_000;

/**
 * Removes the temporary files (`*.v8.PID.tmp`) that writes killed half-way left: those of a dead
 * PID, and any older than a minute (its PID may have been given to another process since).
 */
function removeStaleTemporaries(dir: string, names: string[]): void {
  for (const name of names) {
    const pid = Number(/\.v8\.(\d+)\.tmp$/.exec(name)?.[1]);
    if (!pid || pid === process.pid) continue;
    const path = join(dir, name);
    try {
      if (alive(pid) && Date.now() - statSync(path).mtimeMs < STALE_TMP_MS) continue;
      rmSync(path, { force: true });
    } catch {
      // Gone already (another start removed it), or not ours to remove: the next write tries again.
    }
  }
}

/** Whether a process with this PID exists (EPERM: it does, another user's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Compiles the serve script `script` (with its cache from `cacheFile` when V8 accepts it) and
 * runs it: returns its `main` and, when no valid cache was there, the function that writes one.
 */
export function loadServeScript(
  script: string,
  cacheFile: string | undefined,
): { main: ServeMain; save: (() => void) | undefined } {
  const cachedData = cacheFile ? readOwnCache(cacheFile) : undefined;
  // ASCII only (scripts/build.mjs checks): read as Latin-1, the cheapest decoding.
  const compiled = new Script(readFileSync(script, 'latin1'), {
    filename: script,
    ...(cachedData ? { cachedData } : {}),
  });
  const fresh = cachedData === undefined || compiled.cachedDataRejected === true;
  // The script is one function expression, called as Node calls a CommonJS module's wrapper, with
  // the script's URL standing in for import.meta.url.
  const wrapper = compiled.runInThisContext() as (...args: unknown[]) => void;
  const module = { exports: {} as { main?: ServeMain } };
  // Node's modules load with their own code caches under the small-board V8 flags (builtin-flags.ts).
  const window = builtinFlagWindow(process.execArgv, process.env.NODE_OPTIONS);
  const req = withBuiltinCaches(createRequire(script), window);
  preloadLazyBuiltins(window);
  wrapper(module.exports, req, module, script, dirname(script), pathToFileURL(script).href);
  const save =
    cacheFile && fresh
      ? () => {
          try {
            writeCache(cacheFile, compiled.createCachedData());
          } catch {
            // A read-only or full disk: the next start compiles again, nothing else changes.
          }
        }
      : undefined;
  return { main: module.exports.main!, save };
}

/** Runs `outpost serve` (argv as process.argv) from the serve script at `url`, with the code cache. */
export async function runServeScript(url: URL, argv: string[]): Promise<void> {
  const script = fileURLToPath(url);
  const dir = codeCacheDir();
  const { main, save } = loadServeScript(script, dir ? codeCacheFile(dir, script) : undefined);
  await main(argv, save ? { onWarm: save } : {});
}
