import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import type { GeneratedProto, MessageType } from './codec.ts';

const serializer =
  (type: MessageType) =>
  (value: object): Buffer => {
    if (Array.isArray(value)) throw new Error('cannot encode an array as a message');
    return type.encode(value);
  };
const deserializer = (type: MessageType) => (bytes: Buffer) => type.decode(bytes);

/**
 * gRPC service definitions from a proto package's generated codecs (`load` of
 * lib/<package>/codec.gen.ts: camelCase fields, fixed by the generator), built on the first use
 * of any of them rather than when the module loads (a start or a CLI command not speaking that
 * protocol need not pay for it; docs/performance.md). Unset messages decode as null, int64 as
 * strings, enums as names, every field present: what @grpc/proto-loader gives with `longs: String,
 * enums: String, defaults: true, oneofs: true`, which test/cri/proto-gen.test.ts and
 * test/grpc/codec.test.ts check.
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
