// The three runtimes Outpost runs on, as commands that run a JavaScript file: Node (this process's
// own binary), and Deno and Bun from their npm packages (devDependencies, binaries inside).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

export type RuntimeName = 'node' | 'deno' | 'bun';

const root = resolve(import.meta.dirname, '..', '..');

/** The command line before the script's path, per runtime. */
export const RUNTIME_COMMANDS: Record<RuntimeName, string[]> = {
  node: [process.execPath],
  deno: [join(root, 'node_modules', '.bin', 'deno'), 'run', '-A'],
  bun: [join(root, 'node_modules', '.bin', 'bun')],
};

/**
 * Whether the runtime's binary is installed. A worktree whose node_modules predates the deno and bun
 * devDependencies lacks them (its suites skip those runs); CI installs them (`npm ci`) and fails.
 */
export const hasRuntime = (name: RuntimeName): boolean => existsSync(RUNTIME_COMMANDS[name][0]!);

/** Bundles a TypeScript entry as scripts/build.mjs bundles Outpost (ESM, better-sqlite3 external). */
export async function bundle(entry: string, outfile: string): Promise<void> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20.18',
    format: 'esm',
    external: ['better-sqlite3'],
    banner: {
      js: "import { createRequire as __outpostRequire } from 'node:module'; const require = __outpostRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
}
