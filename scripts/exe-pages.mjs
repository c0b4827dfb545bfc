#!/usr/bin/env node
// Which of a running process's executable pages are resident, and whose they are: the `node`
// binary's resident pages per ELF section and per symbol group (V8's compilers, Node's built-in
// JavaScript and code cache in .rodata, OpenSSL, ICU data, ...). Used for docs/performance.md to
// tell what the agent touches of `node` that a bare HTTP server does not.
//
//   node scripts/exe-pages.mjs PID [PID...]
//
// Reads /proc/PID/maps and /proc/PID/pagemap (the present bit only: no privilege needed for one's
// own processes) and the executable's section headers and symbols (`readelf`, `nm` from binutils).
// Linux, non-PIE executables (as Node's release builds are).
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, readSync, realpathSync } from 'node:fs';

const PAGE = 4096;
const pids = process.argv.slice(2);
if (pids.length === 0) {
  process.stderr.write('usage: node scripts/exe-pages.mjs PID [PID...]\n');
  process.exit(2);
}

const exe = realpathSync(`/proc/${pids[0]}/exe`);
const run = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 30 });

/** [start, size, name] of the sections that are loaded, by address */
const sections = [];
for (const line of run('readelf', ['-SW', exe]).split('\n')) {
  const m = /\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)/.exec(line);
  if (m && Number.parseInt(m[2], 16) > 0)
    sections.push([Number.parseInt(m[2], 16), Number.parseInt(m[3], 16), m[1]]);
}
sections.sort((a, b) => a[0] - b[0]);

/** [start, size, demangled name] of the defined symbols, by address */
const symbols = [];
for (const line of run('nm', ['-S', '-C', '--defined-only', exe]).split('\n')) {
  const m = /^([0-9a-f]{16}) ([0-9a-f]{16}) \S (.*)$/.exec(line);
  if (m) symbols.push([Number.parseInt(m[1], 16), Number.parseInt(m[2], 16), m[3]]);
}
symbols.sort((a, b) => a[0] - b[0]);

/** the last entry of `sorted` starting at or before `addr` that covers it (at least a page) */
function find(sorted, addr) {
  let lo = 0;
  let hi = sorted.length - 1;
  let at = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid][0] <= addr) {
      at = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return at >= 0 && addr < sorted[at][0] + Math.max(sorted[at][1], PAGE) ? sorted[at] : undefined;
}

const PREFIXES = [
  'v8::internal::compiler',
  'v8::internal::maglev',
  'v8::internal::wasm',
  'v8::internal::baseline',
  'v8::internal::interpreter',
  'v8::internal',
  'v8::',
  'node::crypto',
  'node::http2',
  'node::',
  'icu_',
  'uv_',
  'ada::',
  'simdutf',
  'cppgc',
  'std::',
];
function group(name) {
  if (name === undefined) return '(no symbol)';
  if (name.startsWith('icudt')) return 'ICU data';
  if (name.startsWith('Builtins_')) return "V8's embedded builtins";
  const p = PREFIXES.find((x) => name.startsWith(x));
  if (p) return p;
  if (/^(ossl|EVP|X509|SSL|ssl|tls|BN_|ASN1|OPENSSL|CRYPTO|ERR_|ec_|EC_|RSA|PEM|OBJ_|nid_)/.test(name))
    return 'OpenSSL';
  return 'other';
}

for (const pid of pids) {
  const byGroup = new Map();
  let total = 0;
  const fd = openSync(`/proc/${pid}/pagemap`, 'r');
  for (const line of readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 6 || f[5] !== exe) continue;
    const [a, b] = f[0].split('-').map((x) => Number.parseInt(x, 16));
    const pages = (b - a) / PAGE;
    const buf = Buffer.alloc(pages * 8);
    readSync(fd, buf, 0, buf.length, (a / PAGE) * 8);
    for (let i = 0; i < pages; i++) {
      if (!(buf.readBigUInt64LE(i * 8) >> 63n)) continue;
      const addr = a + i * PAGE; // a non-PIE executable is mapped at its ELF addresses
      const key = `${find(sections, addr)?.[2] ?? '?'}\t${group(find(symbols, addr)?.[2])}`;
      byGroup.set(key, (byGroup.get(key) ?? 0) + PAGE);
      total += PAGE;
    }
  }
  closeSync(fd);
  console.log(`PID ${pid}: ${(total / 2 ** 20).toFixed(1)} MB of ${exe} resident`);
  for (const [key, bytes] of [...byGroup].sort((x, y) => y[1] - x[1]).slice(0, 25))
    console.log(`${(bytes / 2 ** 20).toFixed(2).padStart(7)}  ${key.replace('\t', '  ')}`);
}
