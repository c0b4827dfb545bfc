#!/usr/bin/env node
// The ES module entry (dist/outpost.mjs): what Deno and Bun run, and what every command line that
// dist/outpost.cjs (Node's entry, bin/outpost-node.ts) does not answer itself ends up in. `outpost
// --version` and `outpost version --client` answer here, before anything else is imported; every
// other command line goes to lib/cli/main.ts, which the bundle keeps in chunks of its own
// (docs/architecture.md#the-bundle). On Node, `outpost serve` runs from the serve script with a V8
// code cache (lib/cli/code-cache.ts); Deno and Bun import it as any command.
import { versionAnswer } from '#lib/cli/version-answer.ts';

/** The serve script, relative to this file: set by scripts/build.mjs, absent when run from source. */
declare const OUTPOST_SERVE_SCRIPT: string | undefined;

const args = process.argv.slice(2);
const g = globalThis as { Bun?: unknown; Deno?: unknown };
const answer = versionAnswer(args);
if (answer !== undefined) process.stdout.write(answer);
else if (args[0] === 'serve' && typeof OUTPOST_SERVE_SCRIPT === 'string' && !g.Bun && !g.Deno) {
  const { runServeScript } = await import('#lib/cli/code-cache.ts');
  await runServeScript(new URL(OUTPOST_SERVE_SCRIPT, import.meta.url), process.argv);
} else await (await import('#lib/cli/main.ts')).main(process.argv);
