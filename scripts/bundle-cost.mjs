#!/usr/bin/env node
// Prints what each package and each lib/ folder costs in dist/outpost.mjs (bytes in the minified
// output, from the metafile scripts/build.mjs writes), largest first. `node scripts/bundle-cost.mjs
// [N]` shows the N largest (default 30). Used for docs/performance.md.
import { readFileSync } from 'node:fs';

const meta = JSON.parse(readFileSync('dist/outpost.meta.json', 'utf8'));
const output = meta.outputs['dist/outpost.mjs'];
const groups = new Map();
for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
  const parts = path.split('/');
  const at = parts.lastIndexOf('node_modules');
  const key =
    at >= 0
      ? parts.slice(at + 1, at + (parts[at + 1].startsWith('@') ? 3 : 2)).join('/')
      : parts.slice(0, parts[0] === 'lib' ? 2 : 1).join('/');
  groups.set(key, (groups.get(key) ?? 0) + bytesInOutput);
}
const top = Number(process.argv[2] ?? 30);
const sorted = [...groups].sort((a, b) => b[1] - a[1]);
console.log(`dist/outpost.mjs: ${(output.bytes / 1024).toFixed(0)} KiB`);
for (const [key, bytes] of sorted.slice(0, top))
  console.log(
    `${(bytes / 1024).toFixed(0).padStart(6)} KiB  ${((bytes / output.bytes) * 100).toFixed(1).padStart(5)} %  ${key}`,
  );
