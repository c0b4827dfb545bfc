#!/usr/bin/env node
// Runs the uvu suites (unit first, then end-to-end) under tsx and prints one closing line,
// `N passed, N failed, N skipped`, that CI reads. Exit code is non-zero when anything failed.
//
// The suites never touch a user's runtime or /tmp: their containerd labs live in .lab/test and
// .lab/test-recovery (not .lab/lab, `npm start`'s), and TMPDIR is .lab/tmp, which must be
// empty when they end: anything left there is listed, then removed (a failure of the run with
// OUTPOST_TEST_STRICT_TMP=1).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
// Stable, so tsx's compile cache (tsx-UID) stays warm across runs; it is not a leftover.
const tmp = join(root, '.lab', 'tmp');
mkdirSync(tmp, { recursive: true });
const env = {
  ...process.env,
  TMPDIR: tmp,
  OUTPOST_LAB_DIR: process.env.OUTPOST_TEST_LAB_DIR ?? join(root, '.lab', 'test'),
  OUTPOST_RECOVERY_LAB: process.env.OUTPOST_RECOVERY_LAB ?? join(root, '.lab', 'test-recovery'),
};

const args = process.argv.slice(2);
const only = args.find((a) => !a.startsWith('--'));
const suites = [
  { name: 'unit', dir: 'test', ignore: 'e2e' },
  { name: 'e2e', dir: 'test/e2e' },
].filter((s) =>
  args.includes('--unit') ? s.name === 'unit' : args.includes('--e2e') ? s.name === 'e2e' : true,
);

let passed = 0;
let failed = 0;
let skipped = 0;
let exitCode = 0;
for (const suite of suites) {
  if (!existsSync(suite.dir)) continue;
  // The suites' in-process agents serve with the light fetch classes, as `outpost serve` does on
  // Node (lib/http/fetch-globals.ts; OUTPOST_FETCH_CLASSES=node keeps Node's own).
  const uvuArgs = [
    '--import',
    'tsx',
    '--import',
    './lib/http/fetch-globals.ts',
    'node_modules/uvu/bin.js',
    suite.dir,
    only ?? '\\.test\\.ts$',
  ];
  if (suite.ignore) uvuArgs.push('-i', suite.ignore);
  process.stdout.write(`\n== ${suite.name} ==\n`);
  const run = spawnSync(process.execPath, uvuArgs, {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  process.stdout.write(run.stdout ?? '');
  // uvu colours its counters; strip the escapes before reading them.
  const plain = (run.stdout ?? '').replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');
  const total = Number(/Total:\s+(\d+)/.exec(plain)?.[1] ?? 0);
  const ok = Number(/Passed:\s+(\d+)/.exec(plain)?.[1] ?? 0);
  const skip = Number(/Skipped:\s+(\d+)/.exec(plain)?.[1] ?? 0);
  passed += ok;
  skipped += skip;
  failed += total - ok;
  if (run.status !== 0) {
    exitCode = 1;
    if (total === ok) failed += 1; // the suite crashed before uvu could count it
  }
}
const left = readdirSync(tmp).filter((f) => !/^tsx-\d+$/.test(f));
if (left.length > 0) {
  process.stdout.write(`\nleft in TMPDIR ${tmp} by the suites (each must remove what it creates):\n`);
  for (const f of left) process.stdout.write(`  ${f}\n`);
  // Strict (a failure) with OUTPOST_TEST_STRICT_TMP=1; the default reports and removes them until
  // every suite is known to clean up (nothing reaches /tmp either way).
  if (process.env.OUTPOST_TEST_STRICT_TMP === '1') {
    failed += 1;
    exitCode = 1;
  }
}
for (const f of left) rmSync(join(tmp, f), { recursive: true, force: true });
process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
process.exit(exitCode || (failed > 0 ? 1 : 0));
