#!/usr/bin/env node
// The outpost entry point (dist/outpost.mjs). `outpost --version` and `outpost version --client`
// answer here, before anything else is imported; every other command line goes to lib/cli/main.ts,
// which the bundle keeps in chunks of its own (docs/architecture.md#the-bundle), so these two
// compile only this file and the version constant.
import { OUTPOST_VERSION } from '#lib/version.ts';

const args = process.argv.slice(2);
if (args.length === 1 && args[0] === '--version') process.stdout.write(`${OUTPOST_VERSION}\n`);
else if (args.length === 2 && args[0] === 'version' && args[1] === '--client')
  process.stdout.write(`Client Version: v${OUTPOST_VERSION}\n`);
else await (await import('#lib/cli/main.ts')).main(process.argv);
