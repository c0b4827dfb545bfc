import { type Clock, systemClock, type Timer } from '#lib/clock.ts';
import { StatusError } from '#lib/kube/status.ts';
import type { Logger } from '#lib/log.ts';
import type { Store } from '#lib/store/index.ts';
import type { MapperRecord } from '#lib/store/mappers.ts';
import type { WatchEvent } from '#lib/store/watch-hub.ts';
import { deviceEvent } from './events.ts';
import type { MapperClient } from './mapper-client.ts';
import type { MapperRegistry } from './registry.ts';
import type { Device, DeviceModel } from './types.ts';

export interface ReconcilerOptions {
  store: Store;
  registry: MapperRegistry;
  log: Logger;
  clock?: Clock;
  /** How often unreachable mappers are tested again and pending pushes retried. Default 10 s. */
  retryMs?: number;
}

const gen = (o: { metadata: { generation?: number } }) => o.metadata.generation ?? 1;
const nsName = (o: { metadata: { namespace?: string; name?: string } }) =>
  `${o.metadata.namespace ?? 'default'}/${o.metadata.name ?? ''}`;

/**
 * Keeps each mapper holding the devices and models of its protocol: a device or model whose
 * generation the mapper has not acknowledged is pushed (RegisterDevice/UpdateDevice,
 * CreateDeviceModel/UpdateDeviceModel), a deleted one removed. Runs on metabase changes, after
 * registrations, and on a retry timer while something is pending or a mapper is unreachable.
 */
export class DeviceReconciler {
  readonly #o: ReconcilerOptions;
  readonly #clock: Clock;
  readonly #seen = new Map<string, number>();
  readonly #removals: { kind: 'Device' | 'DeviceModel'; object: Device | DeviceModel }[] = [];
  #unsubscribe: (() => void)[] = [];
  #timer: Timer | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  /** The unreachable mappers' periodic test, while it runs. */
  #retrying: Promise<void> | undefined;

  constructor(opts: ReconcilerOptions) {
    this.#o = opts;
    this.#clock = opts.clock ?? systemClock;
  }

  /** Follows the metabase and starts the retry timer. */
  start(): void {
    const { hub, rv } = this.#o.store;
    const follow = (kind: 'Device' | 'DeviceModel') => (ev: WatchEvent) => {
      const obj = ev.object as Device | DeviceModel;
      const k = `${kind}/${nsName(obj)}`;
      if (ev.type === 'DELETED') {
        this.#seen.delete(k);
        this.#removals.push({ kind, object: obj });
      } else if (this.#seen.get(k) === gen(obj))
        return; // a status report: nothing to push
      else this.#seen.set(k, gen(obj));
      this.kick();
    };
    this.#unsubscribe = [
      hub.subscribe('devices', rv.current, follow('Device')),
      hub.subscribe('devicemodels', rv.current, follow('DeviceModel')),
    ];
    this.#arm();
  }

  stop(): void {
    this.#stopped = true;
    for (const u of this.#unsubscribe) u();
    if (this.#timer) this.#clock.clearTimeout(this.#timer);
  }

  /** Runs a pass now, or once more after the running one. */
  kick(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#pass().finally(() => {
      this.#running = undefined;
      if (this.#again) {
        this.#again = false;
        this.kick();
      }
    });
  }

  /** Resolves when no pass is running (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.#running || this.#retrying) {
      await this.#running;
      await this.#retrying;
    }
  }

  #arm(): void {
    this.#timer = this.#clock.setTimeout(() => {
      if (this.#stopped) return;
      // Tracked like a pass: a stop waits for it (idle()), so no mapper test records its outcome
      // in a metabase the agent has closed meanwhile (an uncaught error that ended the process).
      this.#retrying = (async () => {
        for (const m of this.#o.registry.list()) {
          if (this.#stopped) return;
          if (m.state === 'Unreachable') await this.#o.registry.test(m);
        }
        if (this.#stopped) return;
        this.kick();
        this.#arm();
      })().finally(() => {
        this.#retrying = undefined;
      });
    }, this.#o.retryMs ?? 10_000);
  }

  async #pass(): Promise<void> {
    try {
      await this.#remove();
      for (const m of this.#o.registry.list()) {
        if (m.state === 'Unreachable') continue;
        const client = this.#o.registry.forProtocol(m.protocol)?.client;
        if (client) await this.#push(m, client);
      }
    } catch (e) {
      this.#o.log.error({ err: e }, 'device reconciliation failed');
    }
  }

  async #push(mapper: MapperRecord, client: MapperClient): Promise<void> {
    const { store, registry } = this.#o;
    const devices = store.devices.records({ where: { protocol: mapper.protocol } });
    const modelKeys = new Set(
      devices.map((d) => `${d.object.metadata.namespace}/${d.object.spec.deviceModelRef?.name}`),
    );
    const models = store.deviceModels
      .records()
      .filter((m) => m.object.spec.protocol === mapper.protocol || modelKeys.has(nsName(m.object)));
    const work = [
      ...models.map((r) => ({ kind: 'DeviceModel' as const, ...r })),
      ...devices.map((r) => ({ kind: 'Device' as const, ...r })),
    ];
    for (const item of work) {
      const o = item.object;
      if (item.book.pushedGeneration === gen(o)) continue;
      const fresh = item.book.pushedGeneration === undefined;
      try {
        if (item.kind === 'DeviceModel') {
          const m = o as DeviceModel;
          if (fresh) await client.createDeviceModel(m);
          else
            await updateOr404(
              () => client.updateDeviceModel(m),
              () => client.createDeviceModel(m),
            );
          store.deviceModels.setBook(m.metadata.namespace!, m.metadata.name!, (b) => ({
            ...b,
            pushedGeneration: gen(m),
          }));
        } else {
          const d = o as Device;
          if (fresh) await client.registerDevice(d);
          else
            await updateOr404(
              () => client.updateDevice(d),
              () => client.registerDevice(d),
            );
          store.devices.setBook(d.metadata.namespace!, d.metadata.name!, (b) => ({
            ...b,
            pushedGeneration: gen(d),
          }));
          const verb = fresh ? 'Registered' : 'Updated';
          deviceEvent(store.events, d, 'Normal', verb, `${verb.toLowerCase()} with mapper "${mapper.name}"`);
        }
        registry.mark(mapper, 'Running');
      } catch (e) {
        const msg = (e as Error).message;
        if (e instanceof StatusError && e.code === 503) {
          registry.mark(mapper, 'Unreachable', msg);
          return;
        }
        this.#o.log.warn(
          { mapper: mapper.name, object: `${item.kind} ${nsName(o)}`, err: msg },
          'push to mapper failed',
        );
        if (item.kind === 'Device') deviceEvent(store.events, o, 'Warning', 'FailedSync', msg);
      }
    }
  }

  async #remove(): Promise<void> {
    const { registry, log } = this.#o;
    while (this.#removals.length) {
      const { kind, object } = this.#removals[0]!;
      const protocol =
        kind === 'Device'
          ? (object as Device).spec.protocol?.protocolName
          : (object as DeviceModel).spec.protocol;
      const target = protocol ? registry.forProtocol(protocol) : undefined;
      if (target && target.mapper.state !== 'Unreachable') {
        const { namespace = 'default', name = '' } = object.metadata;
        try {
          if (kind === 'Device') await target.client.removeDevice(namespace, name);
          else await target.client.removeDeviceModel(namespace, name);
        } catch (e) {
          if (e instanceof StatusError && e.code === 503)
            registry.mark(target.mapper, 'Unreachable', e.message);
          // A mapper that registers again later is sent only what exists then.
          if (!(e instanceof StatusError && e.code === 404))
            log.warn(
              { object: `${kind} ${nsName(object)}`, err: (e as Error).message },
              'removal from mapper failed',
            );
        }
      }
      this.#removals.shift();
    }
  }
}

async function updateOr404(update: () => Promise<void>, register: () => Promise<void>): Promise<void> {
  try {
    await update();
  } catch (e) {
    // The mapper lost the object (it restarted without asking for data): register it again.
    if (e instanceof StatusError && e.code === 404) await register();
    else throw e;
  }
}
