import type { MethodDefinition } from '@grpc/grpc-js';
import { type Client, Metadata } from '@grpc/grpc-js';

/**
 * One unary call with a deadline and no waitForReady, so a peer that is down fails at once with
 * UNAVAILABLE instead of holding the caller until the deadline. Rejects with the gRPC
 * ServiceError, or an Error for an empty answer; callers translate either into a Status.
 */
export function unaryCall<Res>(
  client: Client,
  def: MethodDefinition<object, object>,
  req: object,
  timeoutMs: number,
): Promise<Res> {
  return new Promise<Res>((resolve, reject) =>
    client.makeUnaryRequest(
      def.path,
      def.requestSerialize,
      def.responseDeserialize,
      req,
      new Metadata(),
      { deadline: Date.now() + timeoutMs },
      (err, res) => (err ? reject(err) : res ? resolve(res as Res) : reject(new Error('empty response'))),
    ),
  );
}
