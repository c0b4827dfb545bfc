import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SPDY_DICTIONARY } from '#lib/spdy/dictionary.ts';
import {
  ControlType,
  dataFrame,
  decodeHeaderBlock,
  encodeHeaderBlock,
  FLAG_FIN,
  ping,
  readFrames,
  synStream,
} from '#lib/spdy/frames.ts';
import { HeaderCodec } from '#lib/spdy/zlib.ts';

const adler32 = (b: Buffer) => {
  let a = 1;
  let s = 0;
  for (const x of b) {
    a = (a + x) % 65521;
    s = (s + a) % 65521;
  }
  return ((s << 16) | a) >>> 0;
};

test('the dictionary is the spec one: 1423 bytes, zlib dictionary id 0xe3c6a7c2', () => {
  assert.is(SPDY_DICTIONARY.length, 1423);
  assert.is(adler32(SPDY_DICTIONARY), 0xe3c6a7c2);
  assert.is(SPDY_DICTIONARY.subarray(0, 11).toString('latin1'), '\0\0\0\x07options');
  assert.is(SPDY_DICTIONARY.subarray(-6).toString('latin1'), 'enq=0.');
});

test('frames split off a byte stream, partial ones kept for later', () => {
  const stream = Buffer.concat([
    dataFrame(3, Buffer.from('hi')),
    dataFrame(5, Buffer.alloc(0), true),
    ping(2),
  ]);
  const first = readFrames(stream.subarray(0, 13));
  assert.is(first.frames.length, 1);
  assert.equal(first.frames[0], { kind: 'data', streamId: 3, flags: 0, data: Buffer.from('hi') });
  const rest = readFrames(Buffer.concat([first.rest, stream.subarray(13)]));
  assert.equal(rest.frames[0], { kind: 'data', streamId: 5, flags: FLAG_FIN, data: Buffer.alloc(0) });
  assert.equal(rest.frames[1], {
    kind: 'control',
    type: ControlType.PING,
    flags: 0,
    payload: Buffer.from([0, 0, 0, 2]),
  });
  assert.is(rest.rest.length, 0);
  assert.throws(() => readFrames(Buffer.from([0x80, 2, 0, 1, 0, 0, 0, 0])), /unsupported SPDY version 2/);
});

test('SYN_STREAM: version 3, type 1, stream id, then the header block after 10 bytes', () => {
  const f = synStream(7, Buffer.from('block'));
  assert.is(f.readUInt32BE(0), 0x80030001);
  assert.is(f.readUIntBE(5, 3), 15);
  assert.is(f.readUInt32BE(8), 7);
  assert.is(f.subarray(18).toString(), 'block');
});

test('name/value blocks: lowercase names, NUL-joined values, truncation detected', () => {
  const block = encodeHeaderBlock({ StreamType: ['stdin'], 'x-multi': ['a', 'b'] });
  assert.equal(decodeHeaderBlock(block), { streamtype: ['stdin'], 'x-multi': ['a', 'b'] });
  assert.throws(() => decodeHeaderBlock(block.subarray(0, block.length - 1)), /truncated/);
});

test('header compression keeps one zlib context per direction across blocks', async () => {
  const writer = new HeaderCodec();
  const reader = new HeaderCodec();
  const one = await writer.encode({ streamtype: ['error'] });
  const two = await writer.encode({ streamtype: ['stdout'] });
  // The first block starts a zlib stream with the preset dictionary (FDICT) and its id.
  assert.is(one[1]! & 0x20, 0x20);
  assert.is(one.readUInt32BE(2), 0xe3c6a7c2);
  assert.equal(await reader.decode(one), { streamtype: ['error'] });
  assert.equal(await reader.decode(two), { streamtype: ['stdout'] });
  // The second block alone is not decodable: it continues the first one's stream.
  const fresh = new HeaderCodec();
  const alone = await fresh.decode(two).then(
    () => 'decoded',
    () => 'rejected',
  );
  assert.is(alone, 'rejected');
  for (const c of [writer, reader, fresh]) c.close();
});

test.run();
