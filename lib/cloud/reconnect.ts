// While the link is offline, one loop asks the API server's /readyz with the jittered 0.5-5 s
// backoff; its first 200 puts the link back online, which wakes every watch and the lease at once.
// One prober instead of each loop retrying on its own keeps a cut-off fleet's reconnect traffic low.
import { sleep } from '#lib/clock.ts';
import { reconnectDelay } from './backoff.ts';
import type { CloudContext } from './context.ts';

/** Runs until `signal` aborts: probes while offline, idles while online. */
export async function runReconnector(
  ctx: CloudContext,
  signal: AbortSignal,
  random = Math.random,
): Promise<void> {
  let attempt = 0;
  while (!signal.aborted) {
    if (ctx.link.online) {
      attempt = 0;
      await new Promise<void>((resolve) => {
        const done = () => {
          off();
          signal.removeEventListener('abort', done);
          resolve();
        };
        const off = ctx.link.onChange((s) => s.state === 'offline' && done());
        signal.addEventListener('abort', done, { once: true });
      });
      continue;
    }
    try {
      const res = await ctx.raw('/readyz', { reportToLink: false, timeoutMs: 5_000, signal });
      await res.body.dump();
      if (res.statusCode === 200) {
        ctx.link.markOnline();
        continue;
      }
      ctx.link.markOffline(new Error(`GET /readyz: HTTP ${res.statusCode}`));
    } catch (e) {
      if (signal.aborted) return;
      ctx.link.markOffline(e);
    }
    await sleep(reconnectDelay(attempt++, random), signal);
  }
}
