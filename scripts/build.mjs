#!/usr/bin/env node
// Bundles Outpost into one file, dist/outpost.mjs, for small ARM boards: only the native
// better-sqlite3 addon stays external (on Node it must sit in node_modules beside the bundle; Deno
// and Bun use their built-in SQLite and need nothing beside it).
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { build } from 'esbuild';

// zod bundles every locale's error messages (~250 KiB minified) for `z.config(z.locales.xx())`;
// Outpost only speaks English. Parsing that much costs start-up time on small boards.
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
      contents: 'export { default as en } from "./en.js";',
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
  },
};

// Drizzle's better-sqlite3 driver imports better-sqlite3 to open a database by path; Outpost hands it
// one opened by db/sqlite.ts (whose driver depends on the runtime), so that import is replaced by a
// stub and the bundle has no static import left: Deno and Bun run dist/outpost.mjs by itself.
const drizzleOpensNothing = {
  name: 'drizzle-opens-nothing',
  setup(b) {
    b.onResolve({ filter: /^better-sqlite3$/ }, (args) =>
      /[\\/]drizzle-orm[\\/]/.test(args.importer)
        ? { path: 'better-sqlite3', namespace: 'drizzle-stub' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'drizzle-stub' }, () => ({
      contents:
        "export default class { constructor() { throw new Error('db/sqlite.ts opens the metabase'); } }",
      loader: 'js',
    }));
  },
};

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
  plugins: [zodEnglishOnly, drizzleOpensNothing],
});
chmodSync('dist/outpost.mjs', 0o755);
// One character above U+00FF anywhere in the file makes V8 hold the whole source as a two-byte
// string: 6.9 MB of heap for the 3.4 MB bundle instead of 3.4 (docs/performance.md). esbuild
// escapes strings but not String.raw templates, so check the result.
const text = readFileSync('dist/outpost.mjs', 'utf8');
const wide = /[\u0100-\uffff]/.exec(text);
if (wide) {
  const code = `\\u${wide[0].charCodeAt(0).toString(16).padStart(4, '0')}`;
  const near = JSON.stringify(text.slice(Math.max(0, wide.index - 60), wide.index + 20));
  console.error(
    `dist/outpost.mjs holds ${JSON.stringify(wide[0])} near ${near}: write it ${code} in the source`,
  );
  process.exit(1);
}
// Which input costs how many bytes of the bundle: `node scripts/bundle-cost.mjs` reads this.
writeFileSync('dist/outpost.meta.json', JSON.stringify(result.metafile));
const bytes = result.metafile.outputs['dist/outpost.mjs'].bytes;
console.log(`built dist/outpost.mjs (${(bytes / 1024).toFixed(0)} KiB) in ${Date.now() - started} ms`);
