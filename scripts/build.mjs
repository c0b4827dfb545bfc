#!/usr/bin/env node
// Bundles Outpost into one file, dist/outpost.mjs, for small ARM boards: only the native
// better-sqlite3 addon stays external (it must sit in node_modules beside the bundle).
import { chmodSync } from 'node:fs';
import { build } from 'esbuild';

const started = Date.now();
const result = await build({
  entryPoints: ['bin/outpost.ts'],
  outfile: 'dist/outpost.mjs',
  bundle: true,
  platform: 'node',
  target: 'node20.18',
  format: 'esm',
  minify: true,
  keepNames: false,
  sourcemap: 'linked',
  legalComments: 'none',
  external: ['better-sqlite3'],
  // CommonJS dependencies call require() for Node built-ins; give the ESM bundle one.
  banner: {
    js: "import { createRequire as __outpostRequire } from 'node:module'; const require = __outpostRequire(import.meta.url);",
  },
  metafile: true,
  logLevel: 'warning',
});
chmodSync('dist/outpost.mjs', 0o755);
const bytes = result.metafile.outputs['dist/outpost.mjs'].bytes;
console.log(`built dist/outpost.mjs (${(bytes / 1024).toFixed(0)} KiB) in ${Date.now() - started} ms`);
