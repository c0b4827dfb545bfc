#!/usr/bin/env node
// What `npm start` and `npm test` need before they run, on a fresh clone: a list of steps, each
// skipped when already done. Add a step by appending to STEPS (name, which targets, when it is
// needed, what it runs); `node scripts/prepare.mjs start|test` runs them in order.
//
//   dependencies   npm ci when node_modules is missing or older than package-lock.json
//   build          dist/outpost.cjs and .mjs when missing or older than their sources
//   runtime        (start) a CRI runtime: $OUTPOST_RUNTIME_ENDPOINT, the system containerd when it
//                  answers, else the containerd lab in .lab/lab, started (scripts/lab.ts pick)
//   cloud-control-plane  (test) the cloud lab's kube-apiserver build (scripts/lab-cloud.ts)
//   test-dirs      (test) .lab/tmp, the suites' TMPDIR
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

const mtime = (p) => (existsSync(p) ? statSync(p).mtimeMs : 0);

function newest(dir) {
  let n = 0;
  if (!existsSync(dir)) return n;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n = Math.max(n, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return n;
}

function sh(cmd, args, opts = {}) {
  process.stderr.write(`prepare: ${cmd} ${args.join(' ')}\n`);
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], ...opts });
  if (r.status !== 0) throw new Error(`prepare: ${cmd} ${args.join(' ')} failed (${r.status ?? r.signal})`);
  return r;
}

const tsx = (args, opts) => sh(process.execPath, ['--import', 'tsx', ...args], opts);

/** The preparation steps, in order. `env` collects variables for what runs after. */
export const STEPS = [
  {
    name: 'dependencies',
    targets: ['start', 'test'],
    needed: () =>
      !existsSync(join(ROOT, 'node_modules/.package-lock.json')) ||
      mtime(join(ROOT, 'package-lock.json')) > mtime(join(ROOT, 'node_modules/.package-lock.json')),
    run: () => sh('npm', ['ci', '--no-audit', '--no-fund']),
  },
  {
    name: 'build',
    targets: ['start', 'test'],
    needed: () => {
      // Node's entry: one build writes it with outpost.mjs (scripts/build.mjs).
      const built = mtime(join(ROOT, 'dist/outpost.cjs'));
      const sources = Math.max(
        ...['bin', 'lib', 'db', 'routes', 'proto'].map((d) => newest(join(ROOT, d))),
        mtime(join(ROOT, 'package.json')),
        mtime(join(ROOT, 'scripts/build.mjs')),
      );
      return built < sources;
    },
    run: () => sh(process.execPath, ['scripts/build.mjs']),
  },
  {
    name: 'runtime',
    targets: ['start'],
    needed: () => true,
    run: (env) => {
      const r = tsx(['scripts/lab.ts', 'pick'], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
      env.OUTPOST_RUNTIME_ENDPOINT = r.stdout.trim();
    },
  },
  {
    // Built once into ~/.cache/outpost; when impossible the cloud suites skip with a loud warning.
    name: 'cloud-control-plane',
    targets: ['test'],
    needed: () => existsSync(join(ROOT, 'scripts/lab-cloud.ts')),
    run: () => {
      try {
        sh('npm', ['run', '-s', 'lab:cloud', '--', 'build']);
      } catch {
        process.stderr.write(
          'prepare: WARNING: the cloud control plane did not build; the cloud suites will be SKIPPED\n',
        );
      }
    },
  },
  {
    name: 'test-dirs',
    targets: ['test'],
    needed: () => !existsSync(join(ROOT, '.lab/tmp')),
    run: () => mkdirSync(join(ROOT, '.lab/tmp'), { recursive: true }),
  },
];

/** Runs the steps of `target`; returns the environment variables they set. */
export function prepare(target) {
  const env = {};
  for (const step of STEPS) {
    if (!step.targets.includes(target) || !step.needed()) continue;
    step.run(env);
  }
  return env;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const target = process.argv[2];
  if (target !== 'start' && target !== 'test') {
    process.stderr.write('usage: node scripts/prepare.mjs start|test\n');
    process.exit(2);
  }
  try {
    prepare(target);
  } catch (e) {
    process.stderr.write(`${e.message}\n`);
    process.exit(1);
  }
}
