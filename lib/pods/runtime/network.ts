// The runtime's pod network as CRI's RuntimeStatus reports it (condition NetworkReady): false while
// the runtime has no usable CNI configuration, when only host-network pods can start. Kept by the
// runtime module's health check; read by /readyz?verbose and `outpost doctor`.
import type { RuntimeStatusResult } from '#lib/cri/types.ts';

export interface NetworkState {
  ready: boolean;
  reason: string;
  message: string;
}

/** The NetworkReady condition of a RuntimeStatus, if the runtime reports one. */
export function networkCondition(status: RuntimeStatusResult): NetworkState | undefined {
  const c = status.conditions.find((x) => x.type === 'NetworkReady');
  return c && { ready: c.status, reason: c.reason, message: c.message };
}

/** One line for an operator: `NetworkReady` or `NetworkReady=false (reason: message)` and what it means. */
export function describeNetwork(n: NetworkState): string {
  if (n.ready) return 'runtime NetworkReady: pods get their own network';
  const why = [n.reason, n.message].filter(Boolean).join(': ');
  return (
    `runtime NetworkReady=false${why ? ` (${why})` : ''}: only hostNetwork pods can start; ` +
    'give the runtime a CNI configuration (docs/networking.md)'
  );
}

/** The last NetworkReady condition the runtime reported. */
export class RuntimeNetwork {
  state: NetworkState | undefined;

  update(status: RuntimeStatusResult): void {
    this.state = networkCondition(status);
  }
}
