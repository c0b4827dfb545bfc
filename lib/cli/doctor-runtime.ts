// `outpost doctor`'s runtime line: whether the container runtime answers and whether it reports
// its pod network ready (CRI RuntimeStatus NetworkReady). Informational: the exit code stays the
// metabase's, since a node without a runtime or a pod network still serves its API.
import { CriClient } from '#lib/cri/client.ts';
import { describeNetwork, networkCondition } from '#lib/pods/runtime/network.ts';

/** Prints one line about the runtime at `endpoint`. */
export async function doctorRuntime(
  o: { endpoint: string; timeoutMs?: number },
  out = (s: string) => process.stdout.write(s),
): Promise<void> {
  const cri = new CriClient({ endpoint: o.endpoint, timeoutMs: o.timeoutMs ?? 3_000 });
  try {
    const [v, status] = await Promise.all([cri.version(), cri.status()]);
    const ready = status.conditions.find((c) => c.type === 'RuntimeReady')?.status;
    const network = networkCondition(status);
    out(
      `runtime ${o.endpoint}: ${v.runtimeName} ${v.runtimeVersion}, ` +
        `${ready ? 'RuntimeReady' : 'RuntimeReady=false'}; ${network ? describeNetwork(network) : 'no NetworkReady condition'}\n`,
    );
  } catch (e) {
    out(`runtime ${o.endpoint}: not reachable (${(e as Error).message.split('\n')[0]})\n`);
  } finally {
    cri.close();
  }
}
