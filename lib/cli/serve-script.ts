// The serve script's entry: `outpost serve` and everything it loads, bundled as one script
// (scripts/build.mjs) that bin/outpost.ts compiles with a V8 code cache on Node
// (lib/cli/code-cache.ts). Only the serve command is defined here: the rest of the CLI is not in it.
// First of all, the light fetch classes take the place of Node's (lib/http/fetch-classes.ts).
import '#lib/http/fetch-globals.ts';
import { parseAndRun, rootCommand } from './program.ts';
import { addServe, type ServeHooks } from './serve-command.ts';

/** Parses an `outpost serve ...` command line and runs it. */
export async function main(argv: string[], hooks: ServeHooks = {}): Promise<void> {
  const program = rootCommand();
  addServe(program, hooks);
  await parseAndRun(program, argv, () => 0);
}
