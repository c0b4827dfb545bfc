import { isDeepStrictEqual } from 'node:util';
import type { Metabase } from '#db/open.ts';
import { DEVICE_API_VERSION, type Device, type DeviceModel, type Twin } from '#lib/kube/devices.ts';
import { type CrdRecord, CrdStore } from './crd.ts';
import type { OutboxStore } from './outbox.ts';
import type { ResourceVersions } from './resource-version.ts';
import type { WatchHub } from './watch-hub.ts';

/** Device states a mapper reports that mean the device answers (mapper framework's ok/online). */
const ONLINE = new Set(['ok', 'online', 'running', 'connected']);

/** Devices (devices.kubeedge.io/v1beta1): desired spec from manifests or edits, status from mappers. */
export class DeviceStore extends CrdStore<Device> {
  readonly #outbox: OutboxStore | undefined;

  constructor(
    mb: Metabase,
    rv: ResourceVersions,
    hub: WatchHub,
    now: () => number = Date.now,
    outbox?: OutboxStore,
  ) {
    super(mb, rv, hub, now, {
      table: 'devices',
      resource: 'devices',
      apiVersion: DEVICE_API_VERSION,
      kind: 'Device',
      columns: (d) => ({
        protocol: d.spec.protocol?.protocolName ?? '',
        model: d.spec.deviceModelRef?.name ?? null,
      }),
    });
    this.#outbox = outbox;
  }

  /**
   * Writes a reported status; a cloud device's status also goes to the outbox in the same
   * transaction (the cloud gets the latest one, on the status subresource).
   */
  #writeStatus(device: Device, rec: CrdRecord<Device>): Device {
    const written = this.write(device, rec.source, rec.origin, rec.book, 'MODIFIED');
    if (rec.source === 'cloud') {
      const { namespace = 'default', name = '' } = written.metadata;
      this.#outbox?.push('device-status', `${namespace}/${name}`, {
        namespace,
        name,
        status: written.status,
      });
    }
    return written;
  }

  /**
   * Merges twins a mapper reported into status.twins, by property name. Returns the device and
   * the twins as they were before, or undefined for an unknown device; an unchanged status is not
   * written.
   */
  reportTwins(
    namespace: string,
    name: string,
    twins: readonly Twin[],
  ): { device: Device; before: Twin[] } | undefined {
    return this.sqlite.transaction(() => {
      const rec = this.record(namespace, name);
      if (!rec) return undefined;
      const before = rec.object.status?.twins ?? [];
      const next = structuredClone(before);
      for (const t of twins) {
        const i = next.findIndex((x) => x.propertyName === t.propertyName);
        if (i >= 0) next[i] = { ...next[i]!, ...t };
        else next.push(structuredClone(t));
      }
      if (isDeepStrictEqual(next, before)) return { device: rec.object, before };
      const device = structuredClone(rec.object);
      device.status = { ...device.status, twins: next };
      return { device: this.#writeStatus(device, rec), before };
    })();
  }

  /** Records the device's state; `lastOnlineTime` moves when it turns online. */
  reportState(
    namespace: string,
    name: string,
    state: string,
  ): { device: Device; before: string } | undefined {
    return this.sqlite.transaction(() => {
      const rec = this.record(namespace, name);
      if (!rec) return undefined;
      const before = rec.object.status?.state ?? '';
      if (before === state) return { device: rec.object, before };
      const device = structuredClone(rec.object);
      device.status = { ...device.status, state };
      if (ONLINE.has(state.toLowerCase()))
        device.status.lastOnlineTime = new Date(this.now()).toISOString().replace(/\.\d+Z$/, 'Z');
      return { device: this.#writeStatus(device, rec), before };
    })();
  }
}

/** Device models: the property types and access modes devices are checked against. */
export class DeviceModelStore extends CrdStore<DeviceModel> {
  constructor(mb: Metabase, rv: ResourceVersions, hub: WatchHub, now: () => number = Date.now) {
    super(mb, rv, hub, now, {
      table: 'device_models',
      resource: 'devicemodels',
      apiVersion: DEVICE_API_VERSION,
      kind: 'DeviceModel',
      columns: (m) => ({ protocol: m.spec.protocol ?? null }),
    });
  }
}
