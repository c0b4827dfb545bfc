import type { MethodDefinition } from '@grpc/grpc-js';
import { type Client, Metadata } from '@grpc/grpc-js';

/**
 * One unary call with a deadline and no waitForReady, so a peer that is down fails at once with
 * UNAVAILABLE instead of holding the caller until the deadline. `signal` cancels the call (grpc-js
 * `call.cancel()`: the peer sees it cancelled, the caller gets CANCELLED at once). Rejects with the
 * gRPC ServiceError, or an Error for an empty answer; callers translate either into a Status.
 */
export function unaryCall<Res>(
  client: Client,
  def: MethodDefinition<object, object>,
  req: object,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    const call = client.makeUnaryRequest(
      def.path,
      def.requestSerialize,
      def.responseDeserialize,
      req,
      new Metadata(),
      { deadline: Date.now() + timeoutMs },
      (err, res) => {
        signal?.removeEventListener('abort', cancel);
        if (err) reject(err);
        else if (res) resolve(res as Res);
        else reject(new Error('empty response'));
      },
    );
    function cancel() {
      call.cancel();
    }
    if (signal?.aborted) cancel();
    else signal?.addEventListener('abort', cancel, { once: true });
  });
}
