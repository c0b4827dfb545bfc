#!/usr/bin/env node
// Node's entry (dist/outpost.cjs, a CommonJS script): what the systemd unit, `outpost supervise`,
// the npm `outpost` command and the release run. Node starts a CommonJS script without its ES
// module loader, which an .mjs entry makes it load and compile first (10-15 ms of every start,
// docs/performance.md#start-up). `--version`, `version --client` and `serve` (from the serve script
// with its code cache) are answered here; every other command line, and every command on Deno and
// Bun, goes to lib/cli/main.ts in the ES module build's chunks, as dist/outpost.mjs sends it.
import { versionAnswer } from '#lib/cli/version-answer.ts';

/** The serve script, and the chunk of lib/cli/main.ts, relative to this file: set by scripts/build.mjs. */
declare const OUTPOST_SERVE_SCRIPT: string;
declare const OUTPOST_MAIN_CHUNK: string;

const args = process.argv.slice(2);
const g = globalThis as { Bun?: unknown; Deno?: unknown };
const answer = versionAnswer(args);
if (answer !== undefined) process.stdout.write(answer);
// A rejection below ends the process as an uncaught error, as a top-level await's does in outpost.mjs.
else if (args[0] === 'serve' && !g.Bun && !g.Deno)
  // Bundled into this file, and evaluated only on this path (esbuild keeps a bundled import() lazy).
  import('#lib/cli/code-cache.ts').then(({ runServeScript }) =>
    runServeScript(new URL(OUTPOST_SERVE_SCRIPT, import.meta.url), process.argv),
  );
// A real import() of the chunk beside this file (esbuild leaves a computed specifier alone).
else
  import(new URL(OUTPOST_MAIN_CHUNK, import.meta.url).href).then((cli: typeof import('#lib/cli/main.ts')) =>
    cli.main(process.argv),
  );
