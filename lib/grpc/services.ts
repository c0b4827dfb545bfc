import type { ServiceDefinition } from '@grpc/proto-loader';
import { fromJSON } from '@grpc/proto-loader';

/**
 * Service definitions from a generated protobufjs JSON descriptor, decoded on the first use of any
 * of them rather than when the module loads (~25 ms and a few MB that a start or a CLI command not
 * speaking that protocol need not pay; docs/performance.md). The decoding options are the ones
 * lib/cri/types.ts and lib/dmi/types.ts are written for: camelCase fields (fixed by the
 * generator), int64 as strings, enums as names, every field present, unset messages null.
 */
export function lazyServices(descriptor: Record<string, unknown>): (name: string) => () => ServiceDefinition {
  let definition: ReturnType<typeof fromJSON> | undefined;
  return (name) => () => {
    definition ??= fromJSON(descriptor as Parameters<typeof fromJSON>[0], {
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    return definition[name] as ServiceDefinition;
  };
}
