// The SQLite seam (db/sqlite.ts) holds to one behaviour on every runtime: the checks of
// sqlite-conformance.ts run here on Node (better-sqlite3), then bundled under Deno (node:sqlite)
// and Bun (bun:sqlite).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SQLITE_DRIVERS } from '#db/sqlite.ts';
import { ci } from '../helpers/lab.ts';
import { bundle, hasRuntime, RUNTIME_COMMANDS } from '../helpers/runtimes.ts';
import { checks } from './sqlite-conformance.ts';

for (const [name, check] of checks) {
  test(`node (${SQLITE_DRIVERS.node}): ${name}`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-sqlite-'));
    try {
      check(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

for (const runtime of ['deno', 'bun'] as const) {
  if (!hasRuntime(runtime) && !ci) {
    process.stderr.write(
      `skipping the ${runtime} checks: ${RUNTIME_COMMANDS[runtime][0]} is not installed (npm install)\n`,
    );
    test.skip(`${runtime} (${SQLITE_DRIVERS[runtime]}): every check passes`, () => {});
    continue;
  }
  test(`${runtime} (${SQLITE_DRIVERS[runtime]}): every check passes`, async () => {
    const dir = mkdtempSync(join(tmpdir(), `outpost-sqlite-${runtime}-`));
    try {
      const script = join(dir, 'checks.mjs');
      await bundle(resolve(import.meta.dirname, 'sqlite-conformance.ts'), script);
      const [cmd, ...args] = RUNTIME_COMMANDS[runtime];
      const run = spawnSync(cmd!, [...args, script, '--run-sqlite-checks'], {
        encoding: 'utf8',
        timeout: 120_000,
      });
      const out = `${run.stdout}${run.stderr}`;
      assert.is(run.status, 0, `${runtime} checks failed:\n${out}`);
      assert.is(out.match(/^ok /gm)?.length, checks.length, out);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test.run();
