// lib/grpc/codec.ts against @grpc/proto-loader (protobufjs 7, with the options the agent's types are
// written for) on random messages: every message type the CRI and DMI services reach, and a
// package of the test's own with every scalar type the codec has, in lists and maps too. Each
// message goes both ways: ours encodes and theirs decodes, theirs encodes and ours decodes, and
// each result must equal what proto-loader gives alone. Seeded, so a failure repeats.
import { fromJSON } from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { descriptor as criDescriptor } from '#lib/cri/proto.gen.ts';
import { descriptor as dmiDescriptor } from '#lib/dmi/proto.gen.ts';
import { protoPackage } from '#lib/grpc/codec.ts';
import { packageSpec } from '../../scripts/gen-proto.ts';
import { seeded } from '../helpers/random.ts';

const OPTS = { longs: String, enums: String, defaults: true, oneofs: true };

type Def = {
  requestSerialize(v: unknown): Buffer;
  requestDeserialize(b: Buffer): unknown;
  responseSerialize(v: unknown): Buffer;
  responseDeserialize(b: Buffer): unknown;
};

const EVERY_SCALAR = `
syntax = "proto3";
package t;
enum Color { RED = 0; GREEN = 1; BLUE = 7; }
message Inner { string s = 1; int64 n = 2; repeated Inner kids = 3; }
message All {
  string s = 1; bytes b = 2; bool flag = 3;
  int32 i32 = 4; uint32 u32 = 5; sint32 s32 = 6; fixed32 f32 = 7; sfixed32 sf32 = 8;
  int64 i64 = 9; uint64 u64 = 10; sint64 s64 = 11; fixed64 f64 = 12; sfixed64 sf64 = 13;
  double d = 14; float f = 15; Color color = 16; Inner inner = 17;
  repeated string rs = 20; repeated bytes rb = 21; repeated bool rflag = 22;
  repeated int32 ri32 = 23; repeated uint32 ru32 = 24; repeated sint32 rs32 = 25;
  repeated fixed32 rf32 = 26; repeated sfixed32 rsf32 = 27; repeated int64 ri64 = 28;
  repeated uint64 ru64 = 29; repeated sint64 rs64 = 30; repeated fixed64 rf64 = 31;
  repeated sfixed64 rsf64 = 32; repeated double rd = 33; repeated float rf = 34;
  repeated Color rcolor = 35; repeated Inner rinner = 36;
  map<string, string> ms = 40; map<string, int64> mi64 = 41; map<string, Inner> minner = 42;
  map<string, Color> mcolor = 43; map<string, bytes> mb = 44; map<string, double> md = 45;
  int32 field_number_far_away = 100000;
}
service T { rpc Echo(All) returns (All); }
`;

/** Random values of the kinds the messages need, from a seeded generator. */
function random(seed: number) {
  const next = seeded(seed);
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const bits = (n: number) => {
    let v = 0n;
    for (let i = 0; i < n; i += 16) v = (v << 16n) | BigInt(int(65536));
    return BigInt.asUintN(n, v);
  };
  return { next, int, pick, bits };
}
type Random = ReturnType<typeof random>;

const STRINGS = ['', 'a', 'web-1', 'ünïcödé ✓', '😀 astral', 'x'.repeat(200), 'line\nbreak'];

function scalar(r: Random, type: string): unknown {
  const edge = r.next() < 0.3;
  switch (type) {
    case 'string':
      return r.pick(STRINGS);
    case 'bytes':
      return Buffer.from(Array.from({ length: r.int(edge ? 300 : 5) }, () => r.int(256)));
    case 'bool':
      return r.next() < 0.5;
    case 'int32':
    case 'sint32':
    case 'sfixed32':
      return edge ? r.pick([0, -1, 2 ** 31 - 1, -(2 ** 31), 127, 128]) : r.int(2 ** 32) - 2 ** 31;
    case 'uint32':
    case 'fixed32':
      return edge ? r.pick([0, 1, 2 ** 32 - 1, 2 ** 31, 16383, 16384]) : r.int(2 ** 32);
    case 'int64':
    case 'sint64':
    case 'sfixed64':
      return String(
        edge
          ? r.pick([0n, -1n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 53n + 1n])
          : BigInt.asIntN(64, r.bits(64)),
      );
    case 'uint64':
    case 'fixed64':
      return String(edge ? r.pick([0n, 1n, 2n ** 64n - 1n, 2n ** 63n, 2n ** 32n]) : r.bits(64));
    case 'double':
      return edge ? r.pick([0, -1.5, 1e308, 5e-324, 2 ** 53 + 2]) : (r.next() - 0.5) * 1e6;
    case 'float':
      return Math.fround(edge ? r.pick([0, -1.5, 3.4e38, 1e-40]) : (r.next() - 0.5) * 1e4);
    default:
      throw new Error(`no random ${type}`);
  }
}

/** A random message of `type`: each field present or not, lists and maps of up to three. */
function message(r: Random, type: protobuf.Type, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of type.fieldsArray) {
    if (r.next() < 0.3) continue;
    const to = f.resolve().resolvedType;
    if (to instanceof protobuf.Type && depth > 3) continue;
    const one = () =>
      to instanceof protobuf.Type
        ? message(r, to, depth + 1)
        : to instanceof protobuf.Enum
          ? r.pick(Object.keys(to.values))
          : scalar(r, f.type);
    if (f.map) {
      const m: Record<string, unknown> = {};
      for (let i = r.int(4); i > 0; i--) m[r.pick(STRINGS)] = one();
      out[f.name] = m;
    } else if (f.repeated) out[f.name] = Array.from({ length: r.int(4) }, one);
    else out[f.name] = one();
  }
  return out;
}

/** Every method's request and response type, random messages of each through both codecs. */
function roundTrips(json: Record<string, unknown>, seed: number, rounds: number): number {
  const root = protobuf.Root.fromJSON(json);
  root.resolveAll();
  const ours = protoPackage(packageSpec(root));
  const theirs = fromJSON(json as Parameters<typeof fromJSON>[0], OPTS);
  const r = random(seed);
  let checked = 0;
  for (const [service, methods] of Object.entries(ours))
    for (const [name, m] of Object.entries(methods)) {
      const their = (theirs[service] as Record<string, Def>)[name]!;
      for (const [side, ourType, serialize, deserialize] of [
        ['request', m.request, their.requestSerialize, their.requestDeserialize],
        ['response', m.response, their.responseSerialize, their.responseDeserialize],
      ] as const) {
        const type = root.lookupType(ourType.name);
        for (let i = 0; i < rounds; i++) {
          const value = message(r, type, 0);
          const what = `${service}/${name} ${side} ${i}: ${JSON.stringify(value)}`;
          const wire = serialize(value);
          const expected = deserialize(wire);
          assert.equal(ourType.decode(wire), expected, `decode ${what}`);
          assert.equal(deserialize(ourType.encode(value)), expected, `encode ${what}`);
          checked++;
        }
      }
    }
  return checked;
}

test('every CRI and DMI message type, random messages, both ways', () => {
  const n = roundTrips(criDescriptor(), 1, 40) + roundTrips(dmiDescriptor(), 2, 40);
  assert.ok(n >= 32 * 2 * 40, `${n} messages`);
});

test('every scalar type, in lists and maps, with their edges', () => {
  const root = protobuf.parse(EVERY_SCALAR, { keepCase: false }).root;
  assert.ok(roundTrips(root.toJSON() as Record<string, unknown>, 3, 1500) === 3000);
});

const every = () => {
  const root = protobuf.parse(EVERY_SCALAR, { keepCase: false }).root;
  root.resolveAll();
  return protoPackage(packageSpec(root))['t.T']!.Echo!.request;
};

test('decoding: defaults, unknown fields, unpacked lists, unnamed enum values, bare map entries', () => {
  const all = every();
  const empty = all.decode(Buffer.alloc(0));
  assert.equal(
    [
      empty.s,
      empty.b,
      empty.flag,
      empty.i64,
      empty.u64,
      empty.d,
      empty.color,
      empty.inner,
      empty.rs,
      empty.ms,
    ],
    ['', Buffer.alloc(0), false, '0', '0', 0, 'RED', null, [], {}],
  );
  const wire = Buffer.from([
    ...[0xb8, 0x3e, 0x05], // field 999, varint 5: unknown
    ...[0xb2, 0x3e, 0x02, 0x61, 0x62], // field 998, 2 bytes: unknown
    ...[0xad, 0x3e, 1, 2, 3, 4], // field 997, fixed32: unknown
    ...[0xa1, 0x3e, 1, 2, 3, 4, 5, 6, 7, 8], // field 996, fixed64: unknown
    ...[0xb8, 0x01, 0x05], // ri32 (23) unpacked: 5
    ...[0xba, 0x01, 0x02, 0x06, 0x07], // ri32 packed: 6, 7
    ...[0x80, 0x01, 0x05], // color (16) = 5, a number the enum does not name
    ...[0xc2, 0x02, 0x00], // ms (40): an entry with neither key nor value
    ...[0x0a, 0x01, 0x7a], // s (1) = "z"
  ]);
  const m = all.decode(wire);
  assert.equal([m.s, m.ri32, m.color, m.ms], ['z', [5, 6, 7], 5, { '': '' }]);
});

test('decoding refuses a truncated or overrunning message', () => {
  const all = every();
  const wire = all.encode({ s: 'hello', inner: { s: 'world' } });
  // Cut anywhere but after "hello" (7 bytes: tag, length, text), which leaves a whole message.
  for (let cut = 1; cut < wire.length; cut++)
    if (cut !== 7)
      assert.throws(() => all.decode(wire.subarray(0, cut)), /out of range|past the end/, `cut at ${cut}`);
});

test('encoding refuses values of the wrong shape, naming the field', () => {
  const all = every();
  assert.throws(
    () => all.encode({ inner: 'x' }),
    (e: Error) => e instanceof TypeError && e.message === '.t.All.inner: object expected',
  );
  assert.throws(() => all.encode({ rs: 'x' }), /\.t\.All\.rs: array expected/);
  assert.throws(() => all.encode({ ms: 5 }), /\.t\.All\.ms: object expected/);
  assert.throws(() => all.encode({ rinner: [5] }), /\.t\.All\.rinner: object expected/);
  assert.throws(() => all.encode({ i64: '1e3' }), /\.t\.All\.i64: not a 64-bit integer/);
  assert.throws(() => all.encode({ b: 5 }), /\.t\.All\.b: buffer expected/);
  // Names the enum lacks are left out, as protobufjs's fromObject leaves them.
  assert.equal(all.decode(all.encode({ color: 'PURPLE', s: 'a' })).color, 'RED');
});

test.run();
