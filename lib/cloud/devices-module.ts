// The `cloud-devices` module: KubeEdge Devices bound to the node and their DeviceModels, listed and
// watched into the metabase. Without the CRDs (404) or the permission (403) it logs one line and
// waits for the next reconnect to look again: no retries against an answer that will not change.
import { setMaxListeners } from 'node:events';
import type { Store } from '#lib/store/index.ts';
import type { ModuleContext, ModuleSpec } from '#lib/supervisor/modules.ts';
import { ApiError, type CloudContext } from './context.ts';
import { CloudDevices, DEVICES_PATH, type DeviceSupport, MODELS_PATH, probeDevices } from './devices.ts';
import { contextRequest, httpListWatch } from './list-watch.ts';
import { linkPause } from './pods-module.ts';
import { Reflector } from './reflector.ts';

/** Resolves at the next offline → online change of the link, or when `signal` aborts. */
function nextReconnect(ctx: CloudContext, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    let wasOffline = !ctx.link.online;
    const done = () => {
      off();
      signal.removeEventListener('abort', done);
      resolve();
    };
    const off = ctx.link.onChange((s) => {
      if (s.state === 'offline') wasOffline = true;
      else if (wasOffline) done();
    });
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Whether a reflector's failure says the devices API is gone or forbidden (not a link fault). */
const refused = (err: unknown): boolean =>
  (err instanceof ApiError && (err.code === 404 || err.code === 403)) ||
  /HTTP 40[34]\b/.test((err as Error)?.message ?? '');

export function cloudDevicesModule(ctx: CloudContext, store: Store): ModuleSpec {
  return {
    name: 'cloud-devices',
    policy: 'Always',
    async run(m: ModuleContext) {
      const log = ctx.log.child({ module: 'cloud-devices' });
      setMaxListeners(0, m.signal);
      const request = contextRequest(ctx);
      const pause = linkPause(ctx);
      let said: DeviceSupport | undefined;
      m.ready();
      let attempt = 0;
      while (!m.signal.aborted) {
        try {
          await ctx.link.waitOnline(m.signal);
        } catch {
          return;
        }
        let support: DeviceSupport;
        try {
          support = await probeDevices((p) => request('GET', p), ctx.nodeName);
          attempt = 0;
        } catch {
          try {
            await pause(attempt++, m.signal);
          } catch {
            return;
          }
          continue;
        }
        if (support === 'absent' || support === 'forbidden') {
          if (said !== support) {
            if (support === 'absent')
              log.info(
                { server: ctx.server },
                'the cluster has no devices.kubeedge.io/v1beta1 (KubeEdge device CRDs): cloud devices are off until they are installed (checked again on reconnect)',
              );
            else
              log.warn(
                { server: ctx.server, node: ctx.nodeName },
                `the node may not list devices.devices.kubeedge.io (403): cloud devices are off; a cluster admin grants it with deploy/crds/node-rbac.yaml (checked again on reconnect)`,
              );
            said = support;
          }
          await nextReconnect(ctx, m.signal);
          continue;
        }
        said = undefined;
        log.info(
          { filter: support.fieldSelector ? 'fieldSelector' : 'client-side' },
          'syncing devices bound to this node from the cloud',
        );
        await syncDevices(ctx, store, support.fieldSelector, m.signal, log);
      }
    },
  };
}

/** Runs the device and model reflectors until the signal aborts or the API refuses them (404/403). */
async function syncDevices(
  ctx: CloudContext,
  store: Store,
  fieldSelector: boolean,
  signal: AbortSignal,
  log: CloudContext['log'],
): Promise<void> {
  const ac = new AbortController();
  const stop = () => ac.abort();
  signal.addEventListener('abort', stop, { once: true });
  const sink = new CloudDevices({ store, nodeName: ctx.nodeName, log });
  const pause = linkPause(ctx);
  const onError = (what: string) => (err: unknown) => {
    if (refused(err)) {
      log.info({ err: (err as Error).message }, `${what} refused by the cloud; looking again on reconnect`);
      ac.abort();
    } else log.debug({ err: (err as Error).message }, `${what} ended; resuming when the link is up`);
  };
  const devices = new Reflector({
    listWatch: httpListWatch(ctx, DEVICES_PATH, fieldSelector ? `spec.nodeName=${ctx.nodeName}` : ''),
    store: sink.devices,
    pause,
    onError: onError('device watch'),
  });
  const models = new Reflector({
    listWatch: httpListWatch(ctx, MODELS_PATH, ''),
    store: sink.models,
    pause,
    onError: onError('device model watch'),
  });
  try {
    await Promise.all([devices.run(ac.signal), models.run(ac.signal)]);
  } finally {
    signal.removeEventListener('abort', stop);
  }
  // Refused: wait for a reconnect before probing again.
  if (!signal.aborted) await nextReconnect(ctx, signal);
}
