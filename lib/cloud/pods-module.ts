import { setMaxListeners } from 'node:events';
import { sleep } from '#lib/clock.ts';
import type { Store } from '#lib/store/index.ts';
import type { ModuleContext, ModuleSpec } from '#lib/supervisor/modules.ts';
import { LinkError } from './api.ts';
import { reconnectDelay } from './backoff.ts';
import type { CloudContext } from './context.ts';
import { contextRequest, httpListWatch } from './list-watch.ts';
import { ObjectWatches, objectListWatch } from './object-watches.ts';
import { OutboxSender } from './outbox-sender.ts';
import { CloudPodSource } from './pod-source.ts';
import { Reflector } from './reflector.ts';
import { TokenManager } from './tokens.ts';

/** What cloud sync code does after a failure: wait for the link, then back off (jittered). */
export function linkPause(ctx: CloudContext) {
  return async (attempt: number, signal: AbortSignal): Promise<void> => {
    await ctx.link.waitOnline(signal);
    await sleep(reconnectDelay(attempt), signal);
    signal.throwIfAborted();
  };
}

/**
 * Turns on the outbox (before any module writes a status) and reports its figures to the link's
 * health and metrics. Call once at start-up when a cloud is configured.
 */
export function enableOutbox(ctx: CloudContext, store: Store): void {
  store.outbox.enabled = true;
  ctx.setOutboxStats(() => ({
    depth: store.outbox.depth(),
    oldestAgeSeconds: store.outbox.oldestAgeSeconds(),
  }));
}

/** Drains the outbox while online; sleeps until something is pushed or the link comes back. */
export async function runOutboxSender(
  ctx: CloudContext,
  sender: OutboxSender,
  store: Store,
  signal: AbortSignal,
): Promise<void> {
  let wake = () => {};
  const offPush = store.outbox.onPush(() => wake());
  const offLink = ctx.link.onChange(() => wake());
  let attempt = 0;
  try {
    while (!signal.aborted) {
      await ctx.link.waitOnline(signal);
      // Armed before the drain: a push while it runs triggers the next round.
      const pushed = new Promise<void>((r) => {
        wake = r;
      });
      try {
        await sender.drain();
        attempt = 0;
        await sleep(60_000, signal, pushed);
      } catch (err) {
        if (signal.aborted) return;
        // An HTTP answer asking to wait (429, 5xx): back off; no answer: the link is offline.
        if (err instanceof LinkError && err.status) await sleep(reconnectDelay(attempt++), signal);
        else if (!(err instanceof LinkError)) ctx.log.warn({ err }, 'outbox sender failed');
      }
    }
  } catch (err) {
    if (!signal.aborted) throw err;
  } finally {
    offPush();
    offLink();
  }
}

/** Keeps the pods' service-account tokens issued and fresh: on pod changes and every 30 s. */
async function runTokens(
  ctx: CloudContext,
  tokens: TokenManager,
  signal: AbortSignal,
  setWake: (wake: () => void) => void,
): Promise<void> {
  let attempt = 0;
  try {
    while (!signal.aborted) {
      await ctx.link.waitOnline(signal);
      const changed = new Promise<void>((r) => setWake(r));
      try {
        await tokens.refresh();
        attempt = 0;
        await sleep(30_000, signal, changed);
      } catch (err) {
        if (signal.aborted) return;
        ctx.log.debug({ err }, 'token refresh failed; retrying');
        await sleep(reconnectDelay(attempt++), signal);
      }
    }
  } catch (err) {
    if (!signal.aborted) throw err;
  }
}

/**
 * The `cloud-pods` module: watches the pods bound to the node into the metabase (the lifecycle
 * manager runs them), the ConfigMaps and Secrets they reference, and drains the outbox.
 */
export function cloudPodsModule(ctx: CloudContext, store: Store): ModuleSpec {
  return {
    name: 'cloud-pods',
    policy: 'Always',
    async run(m: ModuleContext) {
      const log = ctx.log.child({ module: 'cloud-pods' });
      // One waiter per watch (ConfigMaps and Secrets one by one) listens on the module's signal.
      setMaxListeners(0, m.signal);
      const pause = linkPause(ctx);
      const objects = new ObjectWatches({ store, log, listWatch: objectListWatch(ctx), pause });
      const tokens = new TokenManager({ store, request: contextRequest(ctx), log });
      let wakeTokens = () => {};
      const source = new CloudPodSource({
        store,
        nodeName: ctx.nodeName,
        log,
        onChange: () => {
          objects.sync();
          wakeTokens();
        },
      });
      const pods = new Reflector({
        listWatch: httpListWatch(ctx, '/api/v1/pods', `spec.nodeName=${ctx.nodeName}`),
        store: source,
        pause,
        onError: (err) =>
          log.info({ err: (err as Error).message }, 'pod watch ended; resuming when the link is up'),
      });
      const sender = new OutboxSender({ store, request: contextRequest(ctx), nodeName: ctx.nodeName, log });
      objects.sync();
      m.ready();
      try {
        await Promise.all([
          pods.run(m.signal),
          runOutboxSender(ctx, sender, store, m.signal),
          runTokens(ctx, tokens, m.signal, (wake) => {
            wakeTokens = wake;
          }),
        ]);
      } finally {
        objects.stop();
      }
    },
  };
}
