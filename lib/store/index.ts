import type { Metabase } from '#db/open.ts';
import { AuditStore } from './audit.ts';
import { DeviceModelStore, DeviceStore } from './devices.ts';
import { DiskPressure } from './disk.ts';
import { EventStore } from './events.ts';
import { MapperStore } from './mappers.ts';
import { ObjectStore } from './objects.ts';
import { OutboxStore } from './outbox.ts';
import { PodStore } from './pods.ts';
import { ResourceVersions } from './resource-version.ts';
import { WatchHub } from './watch-hub.ts';

export interface Store {
  metabase: Metabase;
  rv: ResourceVersions;
  hub: WatchHub;
  pods: PodStore;
  events: EventStore;
  objects: ObjectStore;
  devices: DeviceStore;
  deviceModels: DeviceModelStore;
  mappers: MapperStore;
  audit: AuditStore;
  outbox: OutboxStore;
  /** Whether metabase writes fail for lack of space. */
  disk: DiskPressure;
}

/** Wires the stores over one metabase, sharing one resourceVersion counter and one watch cache. */
export function createStore(metabase: Metabase, opts: { host: string; now?: () => number }): Store {
  const now = opts.now ?? Date.now;
  const rv = new ResourceVersions(metabase.sqlite);
  const hub = new WatchHub(() => rv.current);
  const disk = new DiskPressure(metabase.sqlite, metabase.path, now);
  disk.watch();
  const outbox = new OutboxStore(metabase, now);
  return {
    disk,
    metabase,
    rv,
    hub,
    outbox,
    pods: new PodStore(metabase, rv, hub, now, outbox),
    events: new EventStore(metabase, rv, hub, { host: opts.host, now, outbox }),
    objects: new ObjectStore(metabase, rv, hub, now),
    devices: new DeviceStore(metabase, rv, hub, now, outbox),
    deviceModels: new DeviceModelStore(metabase, rv, hub, now),
    mappers: new MapperStore(metabase, now),
    audit: new AuditStore(metabase),
  };
}
