#!/usr/bin/env node
// Who keeps a V8 heap snapshot's objects alive: every live object is given to an OWNER, the source
// module (npm package or Outpost file) of its nearest dominator that has one, and the self sizes
// are summed per owner. Used for docs/performance.md, to tell which module's data and code the
// agent's old space holds rather than only which object types.
//
//   node scripts/heap-owners.mjs FILE.heapsnapshot [--top N] [--detail OWNER] [--prop NAME]
//
// --top N         how many owners to list (default 40)
// --detail OWNER  the largest subtrees one owner (a package, `lib/FOLDER`, or `(unowned)`) keeps
// --prop NAME     the objects that have a property or variable NAME, with their retained size
//
// A snapshot comes from `node --heapsnapshot-signal=SIGUSR2 ... serve` and `kill -USR2 PID` (written
// in the agent's working directory). The dominator tree is computed over the snapshot's strong
// edges (weak and shortcut edges left out, as DevTools does). Owners come from two places:
// - a closure's own location (script, line, column), mapped through its script's source map when the
//   script is Outpost's build (dist*/: the serve script or a chunk), else named by the script (a
//   Node internal module, say);
// - the serve script's top-level variables (the context with the most variables): each variable
//   gets the module where the bundle declares it (its first `var`/`let`/`const`/`function`/`class`
//   or `,NAME` declaration; esbuild's minified top-level names are not reused in inner scopes).
// What the serve script's module scope holds through more than one variable is `(serve script,
// shared by its modules)`. What no labelled dominator holds is `(unowned)`: objects reached from
// several roots at once (shared object shapes, internalized strings), Node's own state.
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, join } from 'node:path';

const args = process.argv.slice(2);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const file = args[0];
if (!file || file.startsWith('--')) {
  process.stderr.write(
    'usage: node scripts/heap-owners.mjs FILE.heapsnapshot [--top N] [--detail OWNER] [--prop NAME]\n',
  );
  process.exit(2);
}
const TOP = Number(option('--top') ?? 40);
const DETAIL = option('--detail');
const PROP = option('--prop');

const snap = JSON.parse(readFileSync(file, 'utf8'));
const meta = snap.snapshot.meta;
const NF = meta.node_fields.length;
const EF = meta.edge_fields.length;
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const { nodes: N, edges: E, strings: S } = snap;
const n = N.length / NF;
const typeOf = (v) => nodeTypes[N[v * NF]];
const nameOf = (v) => S[N[v * NF + 1]];
const selfOf = (v) => N[v * NF + 3];
const firstEdge = new Uint32Array(n + 1);
for (let v = 0, e = 0; v < n; v++) {
  firstEdge[v] = e;
  e += N[v * NF + 4] * EF;
}
firstEdge[n] = E.length;
const WEAK = edgeTypes.indexOf('weak');
const SHORTCUT = edgeTypes.indexOf('shortcut');
const CONTEXT = edgeTypes.indexOf('context');
const edgeName = (e) => {
  const t = edgeTypes[E[e]];
  return t === 'element' || t === 'hidden' ? String(E[e + 1]) : S[E[e + 1]];
};
const strong = (e) => E[e] !== WEAK && E[e] !== SHORTCUT;
const target = (e) => E[e + 2] / NF;

// Post order over strong edges from the root (node 0), iteratively.
const post = new Int32Array(n).fill(-1);
const order = new Uint32Array(n);
let count = 0;
{
  const seen = new Uint8Array(n);
  const next = new Uint32Array(n);
  const stack = [0];
  seen[0] = 1;
  next[0] = firstEdge[0];
  while (stack.length) {
    const v = stack[stack.length - 1];
    let pushed = false;
    while (next[v] < firstEdge[v + 1]) {
      const e = next[v];
      next[v] += EF;
      if (!strong(e)) continue;
      const w = target(e);
      if (seen[w]) continue;
      seen[w] = 1;
      next[w] = firstEdge[w];
      stack.push(w);
      pushed = true;
      break;
    }
    if (!pushed) {
      stack.pop();
      post[v] = count;
      order[count++] = v;
    }
  }
}

// Predecessors, then immediate dominators (Cooper, Harvey and Kennedy's iteration, by post number).
const predStart = new Uint32Array(n + 1);
for (let v = 0; v < n; v++)
  if (post[v] >= 0)
    for (let e = firstEdge[v]; e < firstEdge[v + 1]; e += EF) if (strong(e)) predStart[target(e) + 1]++;
for (let v = 0; v < n; v++) predStart[v + 1] += predStart[v];
const preds = new Uint32Array(predStart[n]);
{
  const fill = predStart.slice();
  for (let v = 0; v < n; v++)
    if (post[v] >= 0)
      for (let e = firstEdge[v]; e < firstEdge[v + 1]; e += EF) if (strong(e)) preds[fill[target(e)]++] = v;
}
const root = post[0];
const idom = new Int32Array(count).fill(-1);
idom[root] = root;
for (let changed = true; changed; ) {
  changed = false;
  for (let k = count - 1; k >= 0; k--) {
    if (k === root) continue;
    const v = order[k];
    let d = -1;
    for (let p = predStart[v]; p < predStart[v + 1]; p++) {
      const u = post[preds[p]];
      if (u < 0 || idom[u] < 0) continue;
      if (d < 0) {
        d = u;
        continue;
      }
      let a = u;
      let b = d;
      while (a !== b) {
        while (a < b) a = idom[a];
        while (b < a) b = idom[b];
      }
      d = a;
    }
    if (d >= 0 && idom[k] !== d) {
      idom[k] = d;
      changed = true;
    }
  }
}
const retained = new Float64Array(count);
for (let k = 0; k < count; k++) retained[k] = selfOf(order[k]);
for (let k = 0; k < count; k++) if (k !== root) retained[idom[k]] += retained[k];

// Scripts by id: closure -> shared function info -> script (named by its URL or path).
const edgeTo = (v, name) => {
  for (let e = firstEdge[v]; e < firstEdge[v + 1]; e += EF) if (edgeName(e) === name) return target(e);
  return -1;
};
const closureAt = new Map();
const scripts = new Map();
for (let i = 0; i < snap.locations.length; i += 4) {
  const v = snap.locations[i] / NF;
  if (typeOf(v) !== 'closure') continue; // an object's location is its constructor's, not its owner
  const sid = snap.locations[i + 1];
  closureAt.set(v, [sid, snap.locations[i + 2], snap.locations[i + 3]]);
  if (scripts.has(sid)) continue;
  const shared = edgeTo(v, 'shared');
  let script = shared >= 0 ? edgeTo(shared, 'script_or_debug_info') : -1;
  if (script >= 0 && nameOf(script).startsWith('system /')) script = edgeTo(script, 'script');
  scripts.set(sid, script >= 0 ? nameOf(script) : `script ${sid}`);
}
const maps = new Map();
for (const [sid, url] of scripts) {
  const path = url.replace(/^file:\/\//, '');
  if (!/\/dist[^/]*\//.test(path)) continue;
  try {
    const text = readFileSync(path, 'latin1');
    const link = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(text)?.[1] ?? `${path.split('/').pop()}.map`;
    maps.set(sid, {
      map: new SourceMap(JSON.parse(readFileSync(join(dirname(path), link), 'utf8'))),
      text,
      path,
    });
  } catch (err) {
    process.stderr.write(`no source map for ${path}: ${err.message}\n`);
  }
}
/** An npm package, `lib/FOLDER`, `lib/FILE` or the top folder of one source path. */
const ownerOfSource = (src) => {
  if (/node_modules\/src\//.test(src)) return 'drizzle-orm'; // its source maps say ../src/
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(src);
  if (pkg) return pkg[1];
  const own = /(?:^|\/)(lib\/[^/]+|db|routes|bin)(?:\/|$)/.exec(src);
  return own ? own[1] : src;
};
const ownerAt = (sid, line, column) => {
  const m = maps.get(sid);
  if (!m) {
    const url = scripts.get(sid) ?? '';
    if (url.startsWith('node:')) return '(node internals)';
    return url ? `(${url.replace(/^.*node_modules\/((?:@[^/]+\/)?[^/]+).*$/, '$1')})` : undefined;
  }
  const src = m.map.findEntry(line, column)?.originalSource;
  return src ? ownerOfSource(src) : undefined;
};
const label = new Map();
for (const [v, [sid, line, column]] of closureAt) {
  const o = ownerAt(sid, line, column);
  if (!o) continue;
  label.set(v, o);
  // Its function info too (bytecode, inner functions' infos), which outlives the closure: a module's
  // top-level function, run once, keeps no closure but its code may stay.
  const shared = edgeTo(v, 'shared');
  if (shared >= 0 && !label.has(shared)) label.set(shared, o);
}
// The serve script's top-level variables.
let moduleScope = -1;
let most = 0;
for (let v = 0; v < n; v++) {
  let c = 0;
  for (let e = firstEdge[v]; e < firstEdge[v + 1]; e += EF) if (E[e] === CONTEXT) c++;
  if (c > most) [most, moduleScope] = [c, v];
}
const serve = [...maps].find(([, m]) => /serve-script/.test(m.path));
if (serve && moduleScope >= 0) {
  const [sid, { text }] = serve;
  // What two modules' variables both reach (a class, a prototype, a table one exports to another).
  label.set(moduleScope, '(serve script, shared by its modules)');
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lineStarts.push(i + 1);
  const position = (offset) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return [lo, offset - lineStarts[lo]];
  };
  for (let e = firstEdge[moduleScope]; e < firstEdge[moduleScope + 1]; e += EF) {
    if (E[e] !== CONTEXT) continue;
    const name = edgeName(e);
    const decl = new RegExp(
      `(?:\\b(?:var|let|const|function|class)\\s+|,)${name.replace(/\$/g, '\\$')}(?![\\w$])`,
    );
    const m = decl.exec(text);
    if (!m) continue;
    const o = ownerAt(sid, ...position(m.index + m[0].length - name.length));
    if (o) label.set(target(e), o);
  }
}

// Owner of every node: its own label, else its immediate dominator's owner.
const owner = new Array(count);
for (let k = count - 1; k >= 0; k--)
  owner[k] = label.get(order[k]) ?? (k === root ? '(unowned)' : owner[idom[k]]);
// Where an owner's part begins: a labelled node, or a child of the root.
const head = new Int32Array(count);
const own = new Float64Array(count);
for (let k = count - 1; k >= 0; k--) {
  head[k] = k === root || label.has(order[k]) || idom[k] === root ? k : head[idom[k]];
  own[head[k]] += selfOf(order[k]);
}

const kind = (v) => {
  const t = typeOf(v);
  if (t === 'code' || t === 'closure') return 'code';
  if (t.includes('string')) return 'strings';
  if (t === 'object shape' || t === 'hidden') return 'shapes';
  return 'data';
};
const KINDS = ['code', 'strings', 'shapes', 'data'];
const byOwner = new Map();
let total = 0;
for (let k = 0; k < count; k++) {
  const v = order[k];
  const row = byOwner.get(owner[k]) ?? { total: 0, code: 0, strings: 0, shapes: 0, data: 0 };
  row.total += selfOf(v);
  row[kind(v)] += selfOf(v);
  byOwner.set(owner[k], row);
  total += selfOf(v);
}
const kib = (b) => (b / 1024).toFixed(0).padStart(7);
const describe = (v) => `${typeOf(v)} ${nameOf(v).slice(0, 50).replace(/\s+/g, ' ')}`.trim();
console.log(`${file}: ${(total / 1048576).toFixed(2)} MiB live in ${count} objects`);
console.log(`\n${'KiB'.padStart(7)}${KINDS.map((k) => k.padStart(8)).join('')}  owner`);
for (const [o, row] of [...byOwner].sort((a, b) => b[1].total - a[1].total).slice(0, TOP))
  console.log(`${kib(row.total)}${KINDS.map((k) => ` ${kib(row[k])}`).join('')}  ${o}`);
console.log(
  '\ncode: closures, bytecode, function infos, feedback, scope infos; shapes: maps, descriptor arrays, hidden internals',
);

if (DETAIL) {
  const rows = [];
  for (let k = 0; k < count; k++) if (head[k] === k && k !== root && owner[k] === DETAIL) rows.push(k);
  rows.sort((a, b) => own[b] - own[a]);
  console.log(`\nlargest parts of ${DETAIL} (its own KiB, retained KiB, object, dominators):`);
  for (const k of rows.slice(0, TOP)) {
    const up = [];
    for (let d = idom[k], i = 0; i < 3 && d !== root; d = idom[d], i++)
      up.push(describe(order[d]).slice(0, 40));
    console.log(
      `${kib(own[k])}${kib(retained[k])}  ${describe(order[k])}${up.length ? `  <- ${up.join(' <- ')}` : ''}`,
    );
  }
}
if (PROP) {
  console.log(`\nobjects with a property or variable ${PROP} (retained KiB, owner):`);
  for (let k = 0; k < count; k++) {
    const v = order[k];
    for (let e = firstEdge[v]; e < firstEdge[v + 1]; e += EF)
      if (edgeName(e) === PROP) console.log(`${kib(retained[k])}  ${describe(v)}  ${owner[k]}`);
  }
}
