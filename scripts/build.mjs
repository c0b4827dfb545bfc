#!/usr/bin/env node
// Bundles Outpost for small ARM boards: the entry dist/outpost.mjs (what every command runs; Node
// starts from dist/outpost.cjs, below, which sends what it does not answer to the same chunks) and
// the chunks it imports, dist/chunks/*.mjs (code splitting: modules a command loads with
// `await import()` and code shared between them). A command compiles only the entry and the chunks
// it loads, not all of Outpost (docs/performance.md). Only the native better-sqlite3 addon stays
// external (on Node it must sit in node_modules beside the bundle; Deno and Bun use their built-in
// SQLite and need nothing beside it). Node's `serve` runs from one script instead (the serve
// script, below), which requires four packages it rarely runs from files of their own
// (dist/chunks/vendor-*.cjs).
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
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

/** An esbuild filter matching exactly the module name `specifier`. */
const exactly = (specifier) => new RegExp(`^${specifier.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`);

/**
 * Replaces `specifier` by `contents` (JavaScript) where a file under `node_modules/PKG/` (PKG of
 * `importer`, a package name) imports it; every other importer gets the real module.
 */
const stubFor = (b, { specifier, importer, contents }) => {
  const namespace = `stub-${importer}-${specifier}`;
  const from = new RegExp(`[\\\\/]${importer.replace('/', '[\\\\/]')}[\\\\/]`);
  b.onResolve({ filter: exactly(specifier) }, (args) =>
    from.test(args.importer) ? { path: specifier, namespace } : undefined,
  );
  b.onLoad({ filter: /.*/, namespace }, () => ({ contents, loader: 'js' }));
};

// Drizzle's better-sqlite3 driver imports better-sqlite3 to open a database by path; Outpost hands it
// one opened by db/sqlite.ts (whose driver depends on the runtime), so that import is replaced by a
// stub and the bundle has no static import left: Deno and Bun run dist/outpost.mjs by itself.
const drizzleOpensNothing = {
  name: 'drizzle-opens-nothing',
  setup(b) {
    stubFor(b, {
      specifier: 'better-sqlite3',
      importer: 'drizzle-orm',
      contents:
        "export default class { constructor() { throw new Error('db/sqlite.ts opens the metabase'); } }",
    });
  },
};

// Two built-ins that `serve` loaded before its first answer for nothing: node:http2, which
// @hono/node-server imports for `instanceof Http2ServerRequest` (Outpost serves HTTP/1.1 only, so
// no request is one), and prom-client's Pushgateway's node:https and zlib (Outpost never pushes
// metrics). Under the unit's V8 flags Node's built-ins lose their code cache and the three cost
// about 17 ms of CPU at start (docs/performance.md). gRPC still loads node:http2 when the pod side
// starts. And one library: prom-client's process CPU counters read the active OpenTelemetry span
// for exemplars, which Outpost never enables (without an OpenTelemetry SDK the API answers "no
// span" anyway); @opentelemetry/api's start kept about 98 KiB of heap (docs/performance.md).
const noIdleBuiltins = {
  name: 'no-idle-builtins',
  setup(b) {
    stubFor(b, {
      specifier: 'node:http2',
      importer: '@hono/node-server',
      // NGHTTP2_NO_ERROR is HTTP/2's error code 0 (RFC 9113 7), used only on HTTP/2 streams.
      contents: 'export class Http2ServerRequest {}\nexport const constants = { NGHTTP2_NO_ERROR: 0 };',
    });
    stubFor(b, {
      specifier: './lib/pushgateway',
      importer: 'prom-client',
      contents:
        "module.exports = class Pushgateway { constructor() { throw new Error('Outpost does not push metrics'); } };",
    });
    stubFor(b, {
      specifier: '@opentelemetry/api',
      importer: 'prom-client',
      contents:
        'module.exports = { trace: { getSpan: () => undefined }, context: { active: () => undefined } };',
    });
  },
};

// Third-party packages that `serve` runs only with an option or a request: mqtt (only with
// `--mqtt`, with its streams, socks and caches), ws (the first exec, attach or port-forward),
// @grpc/proto-loader with its protobufjs 7 (grpc-js requires it only for channelz and ORCA, which
// Outpost never uses) and yaml (the first YAML request body or manifest that is not plain JSON, and
// `--cloud`'s kubeconfig). V8 keeps a script's whole source resident, so in the serve script they
// cost memory in every agent (docs/performance.md). Each is built alone into
// dist/chunks/vendor-NAME-HASH.cjs (its CommonJS entry, as Node's `require` resolves it) and the
// serve script keeps only a `require` of that file where the package is first used. Only pure
// third-party packages that share no state with Outpost's modules belong here: a module of Outpost
// must stay one instance, in the serve script.
const VENDOR = { mqtt: 'mqtt', ws: 'ws', 'grpc-proto-loader': '@grpc/proto-loader', yaml: 'yaml' };
const CHUNKS = 'dist/chunks';
const started = Date.now();
/** What every CommonJS output shares: the vendor files, the serve script and Node's entry. */
const NODE_SCRIPT = {
  bundle: true,
  platform: 'node',
  target: 'node20.18',
  format: 'cjs',
  minify: true,
  keepNames: false,
  sourcemap: 'linked',
  legalComments: 'none',
  logLevel: 'warning',
};
const vendorResults = await Promise.all(
  Object.entries(VENDOR).map(async ([name, pkg]) => {
    const entry = createRequire(join(process.cwd(), 'package.json')).resolve(pkg);
    const r = await build({
      entryPoints: { [`vendor-${name}`]: entry },
      outdir: 'dist',
      outExtension: { '.js': '.cjs' },
      entryNames: 'chunks/[name]-[hash]',
      ...NODE_SCRIPT,
      metafile: true,
    });
    const file = Object.keys(r.metafile.outputs).find((f) => f.endsWith('.cjs'));
    if (r.metafile.inputs[relative(process.cwd(), entry)]?.format !== 'cjs') {
      console.error(`${pkg}: its entry ${entry} is not CommonJS; a vendor file must be what require gives`);
      process.exit(1);
    }
    return { pkg, entry, file, metafile: r.metafile };
  }),
);
const vendorFiles = vendorResults.map((v) => v.file);
// In the serve build, each package above resolves to its vendor file (external: the serve script
// requires it from its own folder, lib/cli/code-cache.ts gives it a require made for its path).
const vendorRequires = {
  name: 'vendor-requires',
  setup(b) {
    for (const v of vendorResults) {
      b.onResolve({ filter: exactly(v.pkg) }, async (args) => {
        if (args.pluginData === 'vendor') return undefined;
        // The importer must get the same copy of the package as the vendor file holds.
        const real = await b.resolve(args.path, {
          kind: 'require-call',
          resolveDir: args.resolveDir,
          pluginData: 'vendor',
        });
        if (real.path !== v.entry)
          return { errors: [{ text: `${args.importer} resolves ${v.pkg} to ${real.path}, not ${v.entry}` }] };
        return { path: `./${basename(v.file)}`, external: true };
      });
    }
  },
};

const ENTRY = 'dist/outpost.mjs';
const BANNER =
  "import { createRequire as __outpostRequire } from 'node:module'; const require = __outpostRequire(import.meta.url);";
// `require` as a free name: not a property (`.require`), not inside a word, a string or a flag
// (`"require"`, `--require`). Anything else keeps the banner, so a doubt keeps it.
const FREE_REQUIRE = /(?<![.\w$"'`-])require(?![\w$])/;

// The serve script (lib/cli/serve-script.ts): `outpost serve` and all it loads as one function
// expression, which bin/outpost.ts compiles with a V8 code cache on Node (lib/cli/code-cache.ts);
// ES modules get none on Node 20. Named by content, as the chunks: a cache names the script it is of.
const SERVE_HEAD =
  '(function (exports, require, module, __filename, __dirname, import_meta_url) {"use strict";';
const serveResult = await build({
  entryPoints: { 'serve-script': 'lib/cli/serve-script.ts' },
  outdir: 'dist',
  // .mjs as every file the release's chunks/ carries; it is read as text, never imported.
  outExtension: { '.js': '.mjs' },
  entryNames: 'chunks/[name]-[hash]',
  ...NODE_SCRIPT,
  // A script run by node:vm has no loader for import(): external modules come through require.
  supported: { 'dynamic-import': false },
  define: { 'import.meta.url': 'import_meta_url' },
  external: ['better-sqlite3'],
  banner: { js: SERVE_HEAD },
  footer: { js: '})' },
  metafile: true,
  plugins: [zodEnglishOnly, drizzleOpensNothing, noIdleBuiltins, vendorRequires],
});
const serveScript = Object.keys(serveResult.metafile.outputs).find((f) => f.endsWith('.mjs'));
/** A file in dist/ as an import specifier relative to an entry in dist/, as JSON for a `define`. */
const fromEntry = (file) => JSON.stringify(`./${file.slice('dist/'.length)}`);
const result = await build({
  entryPoints: { outpost: 'bin/outpost.ts' },
  outdir: 'dist',
  outExtension: { '.js': '.mjs' },
  splitting: true,
  // Named by content: an entry and its chunks always belong together, and a process that started
  // before a rebuild still finds the chunks it has not loaded yet until the next build's clean-up.
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  platform: 'node',
  target: 'node20.18',
  format: 'esm',
  minify: true,
  keepNames: false,
  sourcemap: 'linked',
  legalComments: 'none',
  external: ['better-sqlite3'],
  // CommonJS dependencies call require() for Node built-ins; give the ESM output one. esbuild
  // puts the banner on every output file; below it stays only where a chunk uses require.
  banner: { js: BANNER },
  define: { OUTPOST_SERVE_SCRIPT: fromEntry(serveScript) },
  metafile: true,
  logLevel: 'warning',
  plugins: [zodEnglishOnly, drizzleOpensNothing, noIdleBuiltins],
});
chmodSync(ENTRY, 0o755);
// Node's entry (bin/outpost-node.ts): a CommonJS script, which Node starts without its ES module
// loader (docs/performance.md#start-up). It answers `--version` and runs the serve script itself, and
// imports lib/cli/main.ts's chunk of the build above for every other command line.
const NODE_ENTRY = 'dist/outpost.cjs';
const mainChunk = Object.entries(result.metafile.outputs).find(
  ([, o]) => o.entryPoint === 'lib/cli/main.ts',
)?.[0];
if (!mainChunk) throw new Error('the build has no chunk for lib/cli/main.ts');
const ENTRY_URL = '__outpostEntryUrl';
await build({
  entryPoints: { outpost: 'bin/outpost-node.ts' },
  outdir: 'dist',
  outExtension: { '.js': '.cjs' },
  ...NODE_SCRIPT,
  // import.meta.url (the entry's own, and code-cache.ts's createRequire) as a CommonJS script has it.
  banner: { js: `const ${ENTRY_URL} = require('node:url').pathToFileURL(__filename).href;` },
  define: {
    OUTPOST_SERVE_SCRIPT: fromEntry(serveScript),
    OUTPOST_MAIN_CHUNK: fromEntry(mainChunk),
    'import.meta.url': ENTRY_URL,
  },
});
chmodSync(NODE_ENTRY, 0o755);
const outputs = Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.mjs'));
// The serve script is read as Latin-1 (lib/cli/code-cache.ts): ASCII only, checked below.
// Chunks of earlier builds: nothing refers to them any more.
const current = new Set([...outputs, serveScript, ...vendorFiles]);
for (const f of existsSync(CHUNKS) ? readdirSync(CHUNKS) : [])
  if (!current.has(`${CHUNKS}/${f}`) && !current.has(`${CHUNKS}/${f.replace(/\.map$/, '')}`))
    rmSync(join(CHUNKS, f));
// One character above U+00FF anywhere in a file makes V8 hold that whole source as a two-byte
// string: 6.9 MB of heap for the 3.4 MB one-file bundle instead of 3.4 (docs/performance.md).
// esbuild escapes strings but not String.raw templates, so check every output file.
for (const file of outputs) {
  let text = readFileSync(file, 'utf8');
  // The banner is the first line (after the entry's #! line); a file that never calls require
  // gets an empty line instead (the source map's lines stay where they are).
  const at = text.startsWith('#!') ? text.indexOf('\n') + 1 : 0;
  const rest = text.slice(at + BANNER.length);
  if (text.startsWith(`${BANNER}\n`, at) && !FREE_REQUIRE.test(rest)) {
    text = text.slice(0, at) + rest;
    writeFileSync(file, text);
  }
  const wide = /[\u0100-\uffff]/.exec(text);
  if (wide) {
    const code = `\\u${wide[0].charCodeAt(0).toString(16).padStart(4, '0')}`;
    const near = JSON.stringify(text.slice(Math.max(0, wide.index - 60), wide.index + 20));
    console.error(`${file} holds ${JSON.stringify(wide[0])} near ${near}: write it ${code} in the source`);
    process.exit(1);
  }
}
// The vendor files as well: ASCII, as every other output.
for (const file of [NODE_ENTRY, serveScript, ...vendorFiles]) {
  const bytes = readFileSync(file);
  const at = bytes.findIndex((b) => b > 0x7f);
  if (at >= 0) {
    const near = JSON.stringify(bytes.subarray(Math.max(0, at - 60), at + 20).toString('utf8'));
    console.error(
      `${file}: a byte above 0x7f near ${near}: Node's entry, the serve script and its vendor files must be ASCII`,
    );
    process.exit(1);
  }
}
// Which input costs how many bytes of which output (before the banners were dropped): `node scripts/bundle-cost.mjs` reads this.
writeFileSync('dist/outpost.meta.json', JSON.stringify(result.metafile));
// The serve script's own: which packages it holds (test/build/vendor.test.ts checks the vendor ones stay out).
writeFileSync('dist/serve-script.meta.json', JSON.stringify(serveResult.metafile));
const kib = (f) => (result.metafile.outputs[f].bytes / 1024).toFixed(0);
const total = outputs.reduce((n, f) => n + result.metafile.outputs[f].bytes, 0);
const serveKib = (serveResult.metafile.outputs[serveScript].bytes / 1024).toFixed(0);
const vendorKib = vendorResults
  .map((v) => `${basename(v.file)} ${(v.metafile.outputs[v.file].bytes / 1024).toFixed(0)} KiB`)
  .join(', ');
console.log(
  `built ${NODE_ENTRY} (${(statSync(NODE_ENTRY).size / 1024).toFixed(0)} KiB), ${ENTRY} (${kib(ENTRY)} KiB) and ${outputs.length - 1} chunks in ${CHUNKS} (${(total / 1024).toFixed(0)} KiB in all), and the serve script ${serveScript} (${serveKib} KiB) with its vendor files ${vendorKib}, in ${Date.now() - started} ms`,
);
