// What the generated codecs (lib/<package>/codec.gen.ts, written by scripts/gen-proto.ts) are built
// from at run time: protobufjs's minimal runtime (its Reader, Writer and util) and two helpers that
// give each message type and enum the shape protobufjs's generated functions expect of them.
import type { IConversionOptions, Reader, Writer } from 'protobufjs';
import protobuf from 'protobufjs/minimal.js';
import { Int64 } from './int64.ts';

// 64-bit fields as Int64 (BigInt arithmetic), not the long library's WebAssembly (lib/grpc/int64.ts);
// `configure` points protobufjs's reader and LongBits at it.
protobuf.util.Long = Int64 as unknown as typeof protobuf.util.Long;
protobuf.configure();

/** A message type as the generated functions use it: its constructor, with its four codecs on it. */
export interface MessageType {
  encode(message: object, writer?: Writer): Writer;
  decode(reader: Reader | Uint8Array): object;
  fromObject(object: object): object;
  toObject(message: object, options?: IConversionOptions): object;
}

/** An enum as the generated functions use it: names to numbers, numbers to names. */
export interface EnumType {
  values: Record<string, number>;
  valuesById: Record<number, string>;
}

/** One RPC of a generated service. */
export interface GeneratedMethod {
  request: MessageType;
  response: MessageType;
  requestStream: boolean;
  responseStream: boolean;
}

/** A proto package's services by full name (`runtime.v1.RuntimeService`), then method name. */
export type GeneratedProto = Record<string, Record<string, GeneratedMethod>>;

type Codecs = [
  MessageType['encode'],
  MessageType['decode'],
  MessageType['fromObject'],
  MessageType['toObject'],
];
/** The scope protobufjs's generated functions are written against (its `Type.setup`). */
type Make = (
  writer: typeof protobuf.Writer,
  reader: typeof protobuf.Reader,
  types: readonly (MessageType | EnumType | null)[],
  util: typeof protobuf.util,
  ctor: unknown,
) => Codecs;

/**
 * An enum: protobufjs's `values` object falls back to `valuesById` (its prototype), so that the
 * generated `toObject` reads a name with `values[number]`.
 */
export function enumType(valuesById: Record<number, string>, values: Record<string, number>): EnumType {
  return { valuesById, values: Object.assign(Object.create(valuesById) as Record<string, number>, values) };
}

/**
 * Makes the constructor `ctor` a message type: its fields' defaults on its prototype, a virtual
 * property per oneof (the name of the member set), and the codecs `make` returns given the scope
 * protobufjs gives them (`types` is the resolved type of each field, in declaration order).
 */
export function message(
  ctor: { prototype: Record<string, unknown> },
  defaults: Record<string, unknown>,
  oneofs: Record<string, string[]>,
  types: readonly (MessageType | EnumType | null)[],
  make: Make,
): void {
  Object.assign(ctor.prototype, defaults);
  for (const [name, members] of Object.entries(oneofs))
    Object.defineProperty(ctor.prototype, name, {
      get: protobuf.util.oneOfGetter(members),
      set: protobuf.util.oneOfSetter(members),
    });
  const [encode, decode, fromObject, toObject] = make(
    protobuf.Writer,
    protobuf.Reader,
    types,
    protobuf.util,
    ctor,
  );
  Object.assign(ctor, { ctor, encode, decode, fromObject, toObject });
}

/**
 * In place of a codec the generator left out: the message is on the other side of every method of
 * a package Outpost only calls (scripts/gen-proto.ts, CLIENT_ONLY).
 */
export function notGenerated(type: string, codec: string): () => never {
  return () => {
    throw new Error(
      `${type}: no ${codec} generated (Outpost only calls this service; see scripts/gen-proto.ts)`,
    );
  };
}

/** A 64-bit field's default: a frozen zero, as protobufjs gives it. */
export function long0(unsigned: boolean): unknown {
  return Object.freeze(Int64.fromBits(0, 0, unsigned));
}

/** protobufjs's util, for the generated files' field defaults (`util.emptyArray`, ...). */
export const util = protobuf.util;
