#!/usr/bin/env node
// The outpost entry point (dist/outpost.mjs). `outpost --version` and `outpost version --client`
// answer here, before anything else is imported; every other command line goes to lib/cli/main.ts,
// which the bundle keeps in chunks of its own (docs/architecture.md#the-bundle), so these two
// compile only this file and the version constant. On Node, `outpost serve` runs from the serve
// script with a V8 code cache (lib/cli/code-cache.ts); Deno and Bun import it as any command.
import { OUTPOST_VERSION } from '#lib/version.ts';

/** The serve script, relative to this file: set by scripts/build.mjs, absent when run from source. */
declare const OUTPOST_SERVE_SCRIPT: string | undefined;

const args = process.argv.slice(2);
const g = globalThis as { Bun?: unknown; Deno?: unknown };
if (args.length === 1 && args[0] === '--version') process.stdout.write(`${OUTPOST_VERSION}\n`);
else if (args.length === 2 && args[0] === 'version' && args[1] === '--client')
  process.stdout.write(`Client Version: v${OUTPOST_VERSION}\n`);
else if (args[0] === 'serve' && typeof OUTPOST_SERVE_SCRIPT === 'string' && !g.Bun && !g.Deno) {
  const { runServeScript } = await import('#lib/cli/code-cache.ts');
  await runServeScript(new URL(OUTPOST_SERVE_SCRIPT, import.meta.url), process.argv);
} else await (await import('#lib/cli/main.ts')).main(process.argv);
