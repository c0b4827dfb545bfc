// The serve script's vendor files (scripts/build.mjs): mqtt, ws, @grpc/proto-loader and yaml are
// built into dist/chunks/vendor-NAME-HASH.cjs, out of the serve script, which V8 keeps resident
// whole (docs/performance.md). Checks that none of them is back in the serve script (not one byte
// of it), that the script only requires them from the modules that use them (its top level loads
// none), and that each file gives what its package gives. That a default `serve` at 20 pods never
// loads them, and that `--mqtt` and `kubectl exec` do, is measured in docs/performance.md and run by
// the bundle's e2e suites (mqtt, runtimes). Also that zod is in it only as far as Outpost uses it,
// and Drizzle not at all.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ensureBundle } from '../helpers/outpost-process.ts';

const root = join(import.meta.dirname, '../..');
const chunks = join(root, 'dist/chunks');
/** What each vendor file is built from, and a property its package's `require` gives. */
const VENDOR = [
  {
    name: 'mqtt',
    dirs: ['mqtt', 'mqtt-packet', 'socks', 'ip-address', 'smart-buffer', 'worker-timers'],
    has: 'connect',
  },
  { name: 'ws', dirs: ['ws'], has: 'WebSocketServer' },
  { name: 'grpc-proto-loader', dirs: ['@grpc/proto-loader'], has: 'loadSync' },
  // Loaded at the first YAML request body or manifest that is not plain JSON, and by `--cloud`.
  { name: 'yaml', dirs: ['yaml'], has: 'parse' },
];

ensureBundle();
const meta = JSON.parse(readFileSync(join(root, 'dist/serve-script.meta.json'), 'utf8')) as {
  outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
};
const [serveScript, output] = Object.entries(meta.outputs).find(([f]) => f.endsWith('.mjs'))!;
const vendorFile = (name: string) => {
  const files = readdirSync(chunks).filter((f) => new RegExp(`^vendor-${name}-[A-Z0-9]+\\.cjs$`).test(f));
  assert.is(files.length, 1, `one vendor file for ${name} in dist/chunks: ${files}`);
  return files[0]!;
};

test('no vendored package is in the serve script; it requires their files', () => {
  const inputs = Object.keys(output.inputs);
  const source = readFileSync(join(root, serveScript), 'latin1');
  for (const v of VENDOR) {
    for (const dir of v.dirs) {
      const inside = inputs.filter((i) => i.includes(`node_modules/${dir}/`));
      assert.equal(inside, [], `${dir} is in the serve script`);
    }
    assert.ok(
      source.includes(`require("./${vendorFile(v.name)}")`),
      `the serve script requires ${v.name}'s file`,
    );
  }
});

test("the serve script's top level requires no vendor file", () => {
  // The serve script run as lib/cli/code-cache.ts runs it, with a require that records each name.
  const code = `const { Script } = require('node:vm');
const { dirname } = require('node:path');
const { pathToFileURL } = require('node:url');
const file = process.argv[1];
const real = require('node:module').createRequire(file);
const seen = [];
const module = { exports: {} };
new Script(require('node:fs').readFileSync(file, 'latin1'), { filename: file })
  .runInThisContext()(module.exports, (id) => (seen.push(id), real(id)), module, file, dirname(file), pathToFileURL(file).href);
process.stdout.write(JSON.stringify({ seen, main: typeof module.exports.main }));
process.exit(0);`;
  const r = spawnSync(process.execPath, ['-e', code, join(root, serveScript)], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.is(r.status, 0, r.stderr);
  const { seen, main } = JSON.parse(r.stdout) as { seen: string[]; main: string };
  assert.is(main, 'function');
  assert.ok(seen.length > 0, 'the recording require was called');
  assert.equal(
    seen.filter((id) => id.includes('vendor-')),
    [],
  );
});

test('zod is in the serve script only as far as Outpost uses it', () => {
  // Imported as a namespace (`import * as z from 'zod'`), zod lets esbuild leave out what no
  // schema calls: 92 KiB of it in the script instead of 191, and about 0.5 MiB less of the heap at
  // 20 pods (docs/performance.md). Through `import { z } from 'zod'` the whole namespace is kept,
  // and with it these modules, reachable only as z.fromJSONSchema and z.JSONSchemaGenerator.
  for (const file of ['zod/v4/classic/from-json-schema.js', 'zod/v4/core/json-schema-generator.js']) {
    const bytes = Object.entries(output.inputs)
      .filter(([input]) => input.endsWith(`node_modules/${file}`))
      .reduce((sum, [, i]) => sum + i.bytesInOutput, 0);
    assert.is(bytes, 0, `${file} is in the serve script: import zod as \`import * as z from 'zod'\``);
  }
});

test("Drizzle's query builder is not in the serve script: serve never makes one", () => {
  // db/drizzle.ts makes it on first use; the stores run their own statements. In the script it
  // would be about 75 KiB of resident source and 0.25 MiB of heap (docs/performance.md).
  const inside = Object.entries(output.inputs)
    .filter(([input, i]) => /node_modules\/drizzle-orm\/|db\/schema\.ts$/.test(input) && i.bytesInOutput > 0)
    .map(([input]) => input);
  assert.equal(
    inside,
    [],
    'drizzle-orm or the schema is in the serve script: use db/drizzle.ts off the serve path',
  );
});

test('the serve script stays within its size budget', () => {
  // V8 keeps the serve script's source resident for the agent's life, so each KiB added to it is a
  // KiB of every agent's RSS: 1,082 KiB when the 60 MB at 20 pods was met (docs/performance.md,
  // twelfth pass), 58.6 MB with 1.4 MB to spare. Raise the budget only with a bench:footprint run
  // that shows the target still met; code that serve runs rarely belongs behind a vendor file.
  const BUDGET_KIB = 1150;
  const kib = readFileSync(join(root, serveScript)).length / 1024;
  assert.ok(
    kib <= BUDGET_KIB,
    `the serve script is ${kib.toFixed(0)} KiB, over its ${BUDGET_KIB} KiB budget`,
  );
});

test('each vendor file gives what its package gives', () => {
  for (const v of VENDOR) {
    const file = join(chunks, vendorFile(v.name));
    const r = spawnSync(
      process.execPath,
      ['-e', `process.stdout.write(typeof require(process.argv[1])[${JSON.stringify(v.has)}])`, file],
      { encoding: 'utf8', timeout: 60_000 },
    );
    assert.is(r.status, 0, r.stderr);
    assert.is(r.stdout, 'function', `${v.name}: ${v.has}`);
  }
});

test.run();
