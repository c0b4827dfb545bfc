import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import type { IConversionOptions } from 'protobufjs';
import type { GeneratedProto, MessageType } from './codec.ts';

/** How messages are decoded: the options lib/cri/types.ts and lib/dmi/types.ts are written for. */
const DECODE: IConversionOptions = {
  longs: String, // int64 as strings
  enums: String, // enums as names
  defaults: true, // every field present
  oneofs: true,
};

const serializer =
  (type: MessageType) =>
  (value: object): Buffer => {
    if (Array.isArray(value)) throw new Error('cannot encode an array as a message');
    // A Buffer: protobufjs writes into Node Buffers where Buffer exists.
    return type.encode(type.fromObject(value)).finish() as Buffer;
  };
const deserializer =
  (type: MessageType) =>
  (bytes: Buffer): object =>
    type.toObject(type.decode(bytes), DECODE);

/** Freezes an answer's objects all the way down: they are handed out again by `sameAnswerOnce`. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * A List answer decoded once for as long as the runtime sends the same bytes: the pods module
 * relists the runtime every second, and decoding identical ListContainers and ListPodSandbox answers
 * was about a third of what the agent allocated at 20 pods (docs/performance.md). The items are
 * frozen and shared between the calls; each call gets its own top-level arrays, which callers sort.
 */
export function sameAnswerOnce(decode: (bytes: Buffer) => object): (bytes: Buffer) => object {
  let last: { bytes: Buffer; answer: Record<string, unknown> } | undefined;
  return (bytes) => {
    if (!last?.bytes.equals(bytes)) {
      const answer = deepFreeze(decode(bytes) as Record<string, unknown>);
      // grpc-js hands over a Buffer it does not reuse; a copy keeps this one from pinning a larger one.
      last = { bytes: Buffer.from(bytes), answer };
    }
    const copy: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(last.answer)) copy[k] = Array.isArray(v) ? [...v] : v;
    return copy;
  };
}

/**
 * gRPC service definitions from a proto package's generated codecs (`load` of
 * lib/<package>/codec.gen.ts: camelCase fields, fixed by the generator), built on the first use
 * of any of them rather than when the module loads (a start or a CLI command not speaking that
 * protocol need not pay for it; docs/performance.md). Unset messages decode as null, int64 as
 * strings, enums as names, every field present: what @grpc/proto-loader gives with the same
 * options, which test/cri/proto-gen.test.ts checks.
 */
export function lazyServices(load: () => GeneratedProto): (name: string) => () => ServiceDefinition {
  let proto: GeneratedProto | undefined;
  const services = new Map<string, ServiceDefinition>();
  return (name) => () => {
    let service = services.get(name);
    if (service) return service;
    proto ??= load();
    const rpcs = proto[name];
    if (!rpcs) throw new Error(`no service ${name} in the generated codecs`);
    const methods: Record<string, MethodDefinition<object, object>> = {};
    for (const [method, m] of Object.entries(rpcs)) {
      methods[method] = {
        path: `/${name}/${method}`,
        requestStream: m.requestStream,
        responseStream: m.responseStream,
        requestSerialize: serializer(m.request),
        requestDeserialize: deserializer(m.request),
        responseSerialize: serializer(m.response),
        responseDeserialize:
          method.startsWith('List') && !m.responseStream
            ? sameAnswerOnce(deserializer(m.response))
            : deserializer(m.response),
        originalName: method.charAt(0).toLowerCase() + method.slice(1),
      };
    }
    service = methods as ServiceDefinition;
    services.set(name, service);
    return service;
  };
}
