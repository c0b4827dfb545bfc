// The architecture as a test: no import cycles, no import that climbs more than three folders, and
// no lower layer importing a higher one (docs/architecture.md shows the same table).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Layer of each folder under lib/ (and db/, routes/, bin/): a module may import its own layer or lower. */
export const LAYERS: Record<string, number> = {
  'lib/kube': 0,
  'lib/clock.ts': 0,
  'lib/log.ts': 0,
  'lib/version.ts': 0,
  'lib/config.ts': 0,
  'lib/runtime.ts': 0,
  'lib/loop-delay.ts': 0,
  'lib/prom-client-metrics.d.ts': 0,
  'lib/grpc': 1,
  'lib/supervisor': 1,
  db: 1,
  'lib/store': 2,
  'lib/cri': 2,
  'lib/dmi': 3,
  'lib/pods': 3,
  'lib/manifests': 4,
  'lib/cloud': 4,
  'lib/spdy': 3,
  'lib/exec': 4,
  'lib/auth': 4,
  'lib/mqtt': 4,
  'lib/metrics.ts': 4,
  'lib/process-metrics.ts': 4,
  'lib/http': 5,
  'lib/ui': 5,
  routes: 6,
  'lib/app.ts': 7,
  'lib/server.ts': 7,
  'lib/node-api': 7,
  'lib/agent.ts': 8,
  'lib/cli': 9,
  bin: 10,
};

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(join(root, dir))) {
    const rel = join(dir, name);
    if (statSync(join(root, rel)).isDirectory()) walk(rel, out);
    else if (/\.tsx?$/.test(name)) out.push(rel);
  }
  return out;
}

/** The folder (or top-level file) whose layer a path belongs to. */
export function unitOf(path: string): string {
  const parts = path.split('/');
  return parts[0] === 'lib' ? parts.slice(0, 2).join('/') : (parts[0] ?? path);
}

// Value imports only: `import type` vanishes at runtime and cannot form a cycle.
const IMPORT = /^\s*(?:import|export)\s+(?!type\b)[^'";]*?\bfrom\s*['"]([^'"]+)['"]/gm;

function importsOf(file: string): { spec: string; target: string }[] {
  const src = readFileSync(join(root, file), 'utf8');
  const out: { spec: string; target: string }[] = [];
  for (const m of src.matchAll(IMPORT)) {
    const spec = m[1] as string;
    if (spec.startsWith('#')) out.push({ spec, target: spec.slice(1) });
    else if (spec.startsWith('.')) out.push({ spec, target: normalize(join(dirname(file), spec)) });
  }
  return out;
}

const files = ['lib', 'db', 'routes', 'bin'].flatMap((d) => walk(d));
const graph = new Map(files.map((f) => [f, importsOf(f)]));

test('no value import cycles', () => {
  const state = new Map<string, 1 | 2>();
  const cycles: string[] = [];
  const visit = (f: string, stack: string[]) => {
    state.set(f, 1);
    stack.push(f);
    for (const { target } of graph.get(f) ?? []) {
      if (state.get(target) === 1) cycles.push([...stack.slice(stack.indexOf(target)), target].join(' -> '));
      else if (!state.has(target)) visit(target, stack);
    }
    stack.pop();
    state.set(f, 2);
  };
  for (const f of files) if (!state.has(f)) visit(f, []);
  assert.equal(cycles, []);
});

test('no import climbs more than three folders; other top-level folders through #aliases', () => {
  const bad: string[] = [];
  for (const [file, imports] of graph) {
    for (const { spec, target } of imports) {
      if (spec.startsWith('.') && (spec.match(/\.\.\//g)?.length ?? 0) > 3) bad.push(`${file}: ${spec}`);
      if (spec.startsWith('.') && target.split('/')[0] !== file.split('/')[0]) bad.push(`${file}: ${spec}`);
    }
  }
  assert.equal(bad, []);
});

test('no lower layer imports a higher one', () => {
  const bad: string[] = [];
  for (const [file, imports] of graph) {
    const from = LAYERS[unitOf(file)];
    if (from === undefined) {
      bad.push(`${file}: its folder has no layer in test/layers.test.ts`);
      continue;
    }
    for (const { target } of imports) {
      const to = LAYERS[unitOf(target)];
      if (to === undefined || to > from)
        bad.push(`${file} (${from}) imports ${target} (${to ?? 'no layer'})`);
    }
  }
  assert.equal(bad, []);
});

test("the agent never starts ICU's collator: no localeCompare or Intl.Collator outside lib/cli", () => {
  // Its first use costs 3.1 MB of resident memory for the process's life (lib/kube/order.ts);
  // the CLI's commands are short-lived processes and may sort for people.
  const bad: string[] = [];
  for (const file of files) {
    if (file.startsWith(join('lib', 'cli'))) continue;
    const code = readFileSync(join(root, file), 'utf8').replace(/^\s*(\/\/|\*).*$/gm, '');
    if (/\.localeCompare\(|Intl\.Collator/.test(code)) bad.push(file);
  }
  assert.equal(bad, []);
});

test('the layer table names only folders that exist', () => {
  for (const unit of Object.keys(LAYERS)) statSync(join(root, unit));
  assert.ok(relative(root, root) === '');
});

test.run();
