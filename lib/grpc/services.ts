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
        responseDeserialize: deserializer(m.response),
        originalName: method.charAt(0).toLowerCase() + method.slice(1),
      };
    }
    service = methods as ServiceDefinition;
    services.set(name, service);
    return service;
  };
}
