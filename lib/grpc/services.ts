import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import type { IConversionOptions, INamespace, Namespace, Type } from 'protobufjs';
// The reflection build: JSON descriptors only, no .proto parser.
import protobuf from 'protobufjs/light.js';

/** How messages are decoded: the options lib/cri/types.ts and lib/dmi/types.ts are written for. */
const DECODE: IConversionOptions = {
  longs: String, // int64 as strings
  enums: String, // enums as names
  defaults: true, // every field present
  oneofs: true,
};

const serializer =
  (type: Type) =>
  (value: object): Buffer => {
    if (Array.isArray(value)) throw new Error(`cannot encode an array as ${type.name}`);
    // A Buffer: protobufjs writes into Node Buffers where Buffer exists.
    return type.encode(type.fromObject(value)).finish() as Buffer;
  };
const deserializer =
  (type: Type) =>
  (bytes: Buffer): object =>
    type.toObject(type.decode(bytes), DECODE);

/**
 * gRPC service definitions from a generated protobufjs JSON descriptor (camelCase fields, fixed by
 * the generator), decoded on the first use of any of them rather than when the module loads (a
 * start or a CLI command not speaking that protocol need not pay for it; docs/performance.md).
 * Outpost's own rather than @grpc/proto-loader's `fromJSON`: that one also builds a
 * `DescriptorProto` and the file descriptors' bytes for every message type (for reflection, which
 * Outpost does not serve) and loads protobufjs's whole `descriptor.proto` to do so, about 1 MB of
 * heap the agent kept for its lifetime. Unset messages decode as null, int64 as strings, enums as
 * names, every field present.
 */
export function lazyServices(
  descriptor: () => Record<string, unknown>,
): (name: string) => () => ServiceDefinition {
  let root: Namespace | undefined;
  const services = new Map<string, ServiceDefinition>();
  return (name) => () => {
    let service = services.get(name);
    if (service) return service;
    root ??= protobuf.Root.fromJSON(descriptor() as INamespace).resolveAll();
    const methods: Record<string, MethodDefinition<object, object>> = {};
    for (const m of root.lookupService(name).methodsArray) {
      const req = m.resolvedRequestType as Type;
      const res = m.resolvedResponseType as Type;
      methods[m.name] = {
        path: `/${name}/${m.name}`,
        requestStream: !!m.requestStream,
        responseStream: !!m.responseStream,
        requestSerialize: serializer(req),
        requestDeserialize: deserializer(req),
        responseSerialize: serializer(res),
        responseDeserialize: deserializer(res),
        originalName: m.name.charAt(0).toLowerCase() + m.name.slice(1),
      };
    }
    service = methods as ServiceDefinition;
    services.set(name, service);
    return service;
  };
}
