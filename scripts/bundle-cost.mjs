#!/usr/bin/env node
// Prints what each package and each lib/ folder costs in the build (bytes in the minified output,
// from the metafile scripts/build.mjs writes), largest first, over the entry dist/outpost.mjs and
// its chunks dist/chunks/*.mjs; then what every command compiles before it runs anything (the entry
// and the chunks it imports statically, transitively) and the largest chunks.
// `node scripts/bundle-cost.mjs [N]` shows the N largest (default 30). Used for docs/performance.md.
import { readFileSync } from 'node:fs';

const ENTRY = 'dist/outpost.mjs';
const meta = JSON.parse(readFileSync('dist/outpost.meta.json', 'utf8'));
const outputs = Object.entries(meta.outputs).filter(([f]) => f.endsWith('.mjs'));
const total = outputs.reduce((n, [, o]) => n + o.bytes, 0);
const kib = (bytes) => `${(bytes / 1024).toFixed(0).padStart(6)} KiB`;
const pct = (bytes) => `${((bytes / total) * 100).toFixed(1).padStart(5)} %`;

/** package name, or lib/FOLDER, or the top folder, of one input path */
const groupOf = (path) => {
  const parts = path.split('/');
  const at = parts.lastIndexOf('node_modules');
  return at >= 0
    ? parts.slice(at + 1, at + (parts[at + 1].startsWith('@') ? 3 : 2)).join('/')
    : parts.slice(0, parts[0] === 'lib' ? 2 : 1).join('/');
};
const groups = new Map();
for (const [, output] of outputs)
  for (const [path, { bytesInOutput }] of Object.entries(output.inputs))
    groups.set(groupOf(path), (groups.get(groupOf(path)) ?? 0) + bytesInOutput);

// What `node dist/outpost.mjs ...` links (and so compiles) before its first line runs.
const atStart = new Set();
const visit = (file) => {
  if (atStart.has(file)) return;
  atStart.add(file);
  for (const i of meta.outputs[file]?.imports ?? [])
    if (i.kind === 'import-statement' && !i.external) visit(i.path);
};
visit(ENTRY);
const startBytes = [...atStart].reduce((n, f) => n + meta.outputs[f].bytes, 0);

const top = Number(process.argv[2] ?? 30);
console.log(`${ENTRY} and ${outputs.length - 1} chunks: ${kib(total).trim()}`);
console.log(
  `compiled by every command before it runs: ${kib(startBytes).trim()} (${ENTRY} ${kib(meta.outputs[ENTRY].bytes).trim()} and ${atStart.size - 1} chunks it imports statically)`,
);
console.log('\nper package or lib/ folder:');
for (const [key, bytes] of [...groups].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${kib(bytes)}  ${pct(bytes)}  ${key}`);
console.log('\nlargest outputs (* = compiled by every command):');
for (const [file, o] of outputs.sort((a, b) => b[1].bytes - a[1].bytes).slice(0, Math.min(top, 12))) {
  const biggest = Object.entries(o.inputs)
    .map(([p, i]) => [groupOf(p), i.bytesInOutput])
    .reduce((m, [g, b]) => m.set(g, (m.get(g) ?? 0) + b), new Map());
  const main = [...biggest].sort((a, b) => b[1] - a[1]).slice(0, 3);
  console.log(
    `${kib(o.bytes)} ${atStart.has(file) ? '*' : ' '} ${file}: ${main.map(([g, b]) => `${g} ${(b / 1024).toFixed(0)}`).join(', ')}`,
  );
}
