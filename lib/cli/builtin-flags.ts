// Node's own modules keep their V8 code caches under the small-board V8 flags. Node ships a code
// cache for each of its modules, made with V8's default flags; V8 takes a cache only when the
// running flags hash as they did then, so under the unit's `--max-semi-space-size=1 --no-opt ...`
// every Node module `serve` loads is compiled from source, and Node keeps a new cache of each in
// memory. Loading a module with these flags put back to their defaults for that moment, and set
// again right after, takes the shipped caches: what the flags do is done by then (the heap's sizes
// were fixed when the isolate was made) or done elsewhere (TurboFan and code flushing act on the
// agent's code, not during a compile). On Node 20 (V8 11) only: Node 22 and 24 did not take the
// caches either way when measured. docs/performance.md#nodes-modules-with-their-code-caches.
import { createRequire, isBuiltin } from 'node:module';

const load = createRequire(import.meta.url);

/**
 * Each flag Outpost's units set (supervise.ts SMALL_BOARD_FLAGS, deploy/outpost.service), by the V8
 * setting it chooses, and that setting's default on V8 11 (`node --v8-options`).
 */
const V8_11_DEFAULTS: Readonly<Record<string, string>> = {
  '--max-semi-space-size': '--max-semi-space-size=0',
  '--max-old-space-size': '--max-old-space-size=0',
  '--initial-old-space-size': '--initial-old-space-size=0',
  '--turbofan': '--turbofan',
  '--flush-baseline-code': '--no-flush-baseline-code',
  '--bytecode-old-age': '--bytecode-old-age=5',
  '--optimize-for-size': '--no-optimize-for-size',
  '--compact-on-every-full-gc': '--no-compact-on-every-full-gc',
};

/** A flag's name as V8 spells it: `--max_old_space_size=64` is `--max-old-space-size`. */
const flagName = (flag: string): string => flag.split('=')[0]!.replaceAll('_', '-');

/** The V8 setting a flag chooses: `--no-opt`, `--opt=false`, `--turbofan` and `--no_turbofan` all choose `turbofan`. */
export const flagSetting = (flag: string): string => {
  const name = flagName(flag).replace(/^--no-/, '--');
  return name === '--opt' ? '--turbofan' : name;
};

/** The flags to set while one of Node's modules loads (`defaults`), and to set again after (`given`). */
export interface FlagWindow {
  defaults: string;
  given: string;
}

/** Flags under which V8 refuses Node's caches whatever the window does, and under which TurboFan must stay off. */
const NO_JIT = new Set(['--jitless', '--lite-mode']);

/**
 * The window for a process started with `execArgv` and `nodeOptions` (NODE_OPTIONS): undefined on
 * another V8 than 11, under `--jitless` or `--lite-mode` (the window would turn TurboFan on for
 * nothing), or when none of the flags it knows was given (nothing to put back).
 */
export function builtinFlagWindow(
  execArgv: readonly string[],
  nodeOptions = '',
  v8Version = process.versions.v8,
): FlagWindow | undefined {
  if (!v8Version.startsWith('11.')) return undefined;
  // NODE_OPTIONS is applied before the command line, so a flag given in both ends as the command line's.
  const all = [...nodeOptions.split(/\s+/), ...execArgv];
  if (all.some((f) => NO_JIT.has(flagName(f)))) return undefined;
  const given = all.filter((f) => V8_11_DEFAULTS[flagSetting(f)]);
  if (given.length === 0) return undefined;
  const defaults = new Set(given.map((f) => V8_11_DEFAULTS[flagSetting(f)]));
  return { defaults: [...defaults].join(' '), given: given.join(' ') };
}

/** Runs `fn` with the window's defaults set, and sets the given flags again after. */
function inWindow<T>(window: FlagWindow, fn: () => T): T {
  const { setFlagsFromString } = load('node:v8') as typeof import('node:v8');
  setFlagsFromString(window.defaults);
  try {
    return fn();
  } finally {
    setFlagsFromString(window.given);
  }
}

/**
 * `req` (a CommonJS require), but loading each of Node's modules the first time with the window's
 * defaults set; with no window, `req` itself.
 */
export function withBuiltinCaches(req: NodeJS.Require, window: FlagWindow | undefined): NodeJS.Require {
  if (!window) return req;
  const loaded = new Set<string>();
  const wrapped = ((id: string) => {
    if (loaded.has(id) || !isBuiltin(id)) return req(id);
    loaded.add(id);
    return inWindow(window, () => req(id));
  }) as NodeJS.Require;
  return Object.assign(wrapped, req);
}

/**
 * Loads through the window what Node loads by itself, inside its own calls, before a server's first
 * answer, which no require of Outpost's reaches: `cluster` (with five internal modules of its own)
 * and `dns`, which `net` requires at the first `listen()`. They would be loaded a little later
 * anyway; loaded here they take their caches (8-9 ms compiled from source under the unit's flags,
 * 3 ms with their caches). Nothing without a window.
 */
export function preloadLazyBuiltins(window: FlagWindow | undefined): void {
  if (window) inWindow(window, () => [load('node:cluster'), load('node:dns')]);
}
