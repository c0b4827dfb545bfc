// The CRI log reader on files written here: parsing, partial lines, the filters, rotation, follow.
import { appendFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LineJoiner, parseCriLine, parseRfc3339 } from '#lib/pods/logs/format.ts';
import { type FollowOptions, LineSplitter, type LogOptions, writeContainerLog } from '#lib/pods/logs/read.ts';

const root = mkdtempSync(join(tmpdir(), 'outpost-logs-'));
let n = 0;
/** A fresh `<dir>/main/0.log` holding `records`. */
function logFile(records: string[] = []): string {
  const dir = join(root, String(n++), 'main');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, '0.log');
  writeFileSync(path, records.map((r) => `${r}\n`).join(''));
  return path;
}
const at = (s: number, frac = '') => `2026-03-01T10:00:${String(s).padStart(2, '0')}${frac}Z`;
const out = (s: number, msg: string, tag = 'F') => `${at(s)} stdout ${tag} ${msg}`;
const err = (s: number, msg: string, tag = 'F') => `${at(s)} stderr ${tag} ${msg}`;

async function read(path: string, opts: LogOptions = {}, follow?: FollowOptions): Promise<string> {
  const chunks: Buffer[] = [];
  await writeContainerLog(path, opts, async (c) => void chunks.push(c), follow);
  return Buffer.concat(chunks).toString();
}

test('parseCriLine: stream, tag, message; malformed records are skipped', () => {
  const e = parseCriLine(Buffer.from('2026-03-01T10:00:00.5+00:00 stderr P:x hello world'));
  assert.is(e?.stream, 'stderr');
  assert.is(e?.partial, true);
  assert.is(e?.content.toString(), 'hello world');
  assert.is(e?.time, '2026-03-01T10:00:00.5Z', 'a zero offset prints as Z, as Go formats it');
  assert.is(parseCriLine(Buffer.from(`${at(1)} stdout F `))?.content.toString(), '', 'an empty line');
  for (const bad of ['garbage', `${at(1)} stdin F x`, 'yesterday stdout F x', `${at(1)} stdout F`])
    assert.is(parseCriLine(Buffer.from(bad)), undefined, bad);
});

test('parseRfc3339: nanoseconds, offsets, and what is not a time', () => {
  assert.is(parseRfc3339('1970-01-01T00:00:01.000000002Z'), 1_000_000_002n);
  assert.is(parseRfc3339('1970-01-01T01:00:00+01:00'), 0n);
  assert.is(parseRfc3339('2026-02-30T00:00:00Z'), undefined);
  assert.is(parseRfc3339('2026-01-01 00:00:00Z'), undefined);
});

test('partial records are joined per stream, stamped with their first record', async () => {
  const path = logFile([
    out(1, 'hel', 'P'),
    err(2, 'an error'),
    out(3, 'lo ', 'P'),
    out(4, 'world'),
    err(5, 'tail'),
  ]);
  assert.is(await read(path), 'an error\nhello world\ntail\n');
  assert.is(
    await read(path, { timestamps: true }),
    `${at(2)} an error\n${at(1)} hello world\n${at(5)} tail\n`,
  );
  assert.is(await read(path, { stream: 'stdout' }), 'hello world\n');
});

test('a last partial record (output without a newline) is served without one', async () => {
  assert.is(await read(logFile([out(1, 'one'), out(2, 'prompt> ', 'P')])), 'one\nprompt> ');
  // A record the runtime is still writing (no LF yet) is served as far as it got, without a newline.
  const writing = logFile([out(1, 'one')]);
  appendFileSync(writing, out(2, 'hal'));
  assert.is(await read(writing), 'one\nhal');
});

test('an over-long joined line is served in pieces, stamped once', () => {
  const j = new LineJoiner(4);
  const e = (s: string, partial: boolean) => ({ ...parseCriLine(Buffer.from(out(1, s)))!, partial });
  const pieces = [...j.push(e('abc', true)), ...j.push(e('def', true)), ...j.push(e('g', false))];
  assert.equal(
    pieces.map((m) => [m.content.toString(), m.newline, m.continuation]),
    [
      ['abcdef', false, false],
      ['g', true, true],
    ],
  );
});

test('tailLines counts lines after joining and filtering; 0 prints nothing', async () => {
  const path = logFile([out(1, 'a'), out(2, 'b', 'P'), out(3, 'c'), err(4, 'x'), out(5, 'd'), out(6, 'e')]);
  assert.is(await read(path, { tailLines: 2 }), 'd\ne\n');
  assert.is(await read(path, { tailLines: 4 }), 'bc\nx\nd\ne\n');
  assert.is(await read(path, { tailLines: 3, stream: 'stdout' }), 'bc\nd\ne\n');
  assert.is(await read(path, { tailLines: 100 }), 'a\nbc\nx\nd\ne\n');
  assert.is(await read(path, { tailLines: 0 }), '');
});

test('since keeps lines written at or after the instant', async () => {
  const path = logFile([out(1, 'a'), out(2, 'b'), out(3, 'c')]);
  assert.is(await read(path, { sinceNs: parseRfc3339(at(2)) }), 'b\nc\n');
  assert.is(await read(path, { sinceNs: parseRfc3339(at(2, '.000000001')) }), 'c\n');
  assert.is(await read(path, { sinceNs: parseRfc3339(at(2)), tailLines: 1 }), 'c\n');
});

test('limitBytes cuts the output, timestamps included, even mid-line', async () => {
  const path = logFile([out(1, 'hello'), out(2, 'world')]);
  assert.is(await read(path, { limitBytes: 8 }), 'hello\nwo');
  assert.is(await read(path, { limitBytes: 6 }), 'hello\n');
  assert.is(await read(path, { limitBytes: 25, timestamps: true }), `${at(1)} hell`);
});

test('rotated files are read first, oldest first: logrotate numbers (gzip too) and kubelet stamps', async () => {
  const path = logFile([out(9, 'current')]);
  writeFileSync(`${path}.1`, `${out(7, 'rotated once')}\n`);
  writeFileSync(`${path}.2.gz`, gzipSync(`${out(5, 'rotated twice')}\n`));
  writeFileSync(`${path}.3`, `${out(4, 'oldest')}\n`);
  writeFileSync(`${path}.bak`, `${out(8, 'not a rotation')}\n`);
  writeFileSync(`${path}.4.gz`, 'not gzip at all');
  assert.is(await read(path), 'oldest\nrotated twice\nrotated once\ncurrent\n');
  assert.is(await read(path, { tailLines: 2 }), 'rotated once\ncurrent\n');

  const stamped = logFile([out(9, 'now')]);
  writeFileSync(`${stamped}.20260301-100008`, `${out(8, 'newer')}\n`);
  writeFileSync(`${stamped}.20260301-100001.gz`, gzipSync(`${out(1, 'older')}\n`));
  assert.is(await read(stamped), 'older\nnewer\nnow\n');
});

test('LineSplitter puts a record cut across chunks back together', () => {
  const s = new LineSplitter();
  const lines: string[] = [];
  const push = (t: string) => s.push(Buffer.from(t), (l) => lines.push(l.toString()));
  push('ab');
  push('c\nde');
  push('f\n\ng');
  s.end((l) => lines.push(l.toString()));
  assert.equal(lines, ['abc', 'def', '', 'g']);
});

test('follow: appended lines are served until the container stops, partials joined', async () => {
  const path = logFile([out(1, 'before')]);
  let running = true;
  const chunks: string[] = [];
  const done = writeContainerLog(
    path,
    { tailLines: 1 },
    async (c) => {
      chunks.push(c.toString());
      if (chunks.length === 1) {
        appendFileSync(path, `${out(2, 'half ', 'P')}\n`);
        appendFileSync(path, `${out(3, 'and half')}\n`);
      }
      if (running && chunks.join('').includes('and half')) {
        appendFileSync(path, `${out(4, 'last words')}\n`);
        running = false;
      }
    },
    { running: async () => running, signal: new AbortController().signal, idleMs: 20 },
  );
  await done;
  assert.is(chunks.join(''), 'before\nhalf and half\nlast words\n');
});

test('follow: a log rotated while followed is read to its end, then the new file', async () => {
  const path = logFile([out(1, 'one')]);
  let running = true;
  const seen: string[] = [];
  await writeContainerLog(
    path,
    {},
    async (c) => {
      seen.push(c.toString());
      const text = seen.join('');
      if (text === 'one\n') {
        appendFileSync(path, `${out(2, 'two')}\n`);
        renameSync(path, `${path}.1`);
        writeFileSync(path, `${out(3, 'three')}\n`);
      }
      if (text.endsWith('three\n')) running = false;
    },
    { running: async () => running, signal: new AbortController().signal, idleMs: 20 },
  );
  assert.is(seen.join(''), 'one\ntwo\nthree\n');
});

test('follow: ends when the client leaves, and waits for a file not written yet', async () => {
  const path = join(root, 'later', 'main', '0.log');
  const left = new AbortController();
  const chunks: string[] = [];
  const done = writeContainerLog(
    path,
    {},
    async (c) => {
      chunks.push(c.toString());
      left.abort();
    },
    { running: async () => true, signal: left.signal, idleMs: 20 },
  );
  mkdirSync(join(root, 'later', 'main'), { recursive: true });
  writeFileSync(path, `${out(1, 'finally')}\n`);
  await done;
  assert.is(chunks.join(''), 'finally\n');
});

test.after(() => rmSync(root, { recursive: true, force: true }));
test.run();
