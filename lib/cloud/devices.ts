// KubeEdge devices from the cloud: the Devices bound to this node (`spec.nodeName`) and the
// DeviceModels they reference, mirrored into the metabase as `source=cloud` objects (the DMI
// reconciler pushes them to the mappers like any other), while the twins and state the mappers
// report go back through the outbox (lib/store/devices.ts, lib/cloud/outbox-sender.ts).
import { DEVICE_API_VERSION, type Device, type DeviceModel } from '#lib/kube/devices.ts';
import type { KubeObject } from '#lib/kube/types.ts';
import type { Logger } from '#lib/log.ts';
import type { Store } from '#lib/store/index.ts';
import type { ReflectorStore } from './reflector.ts';

export const DEVICES_PATH = `/apis/${DEVICE_API_VERSION}/devices`;
export const MODELS_PATH = `/apis/${DEVICE_API_VERSION}/devicemodels`;

const key = (o: KubeObject) => `${o.metadata.namespace ?? 'default'}/${o.metadata.name ?? ''}`;

/**
 * What the cloud offers this node: `absent` (no devices.kubeedge.io/v1beta1, 404), `forbidden`
 * (the node's identity may not list devices, 403), or available, with whether the API server
 * filters by `spec.nodeName` itself (a CRD with selectable fields) or the node must.
 */
export type DeviceSupport = 'absent' | 'forbidden' | { fieldSelector: boolean };

/**
 * Two requests tell which case this is: discovery of the group version (allowed to every
 * authenticated client; 404 without the CRDs: RBAC answers 403 for an unknown resource before its
 * absence would show), then a one-item list filtered by node.
 */
export async function probeDevices(
  request: (path: string) => Promise<{ status: number; body: unknown }>,
  nodeName: string,
): Promise<DeviceSupport> {
  const d = await request(`/apis/${DEVICE_API_VERSION}`);
  if (d.status === 404) return 'absent';
  if (d.status !== 200) throw new Error(`GET /apis/${DEVICE_API_VERSION}: HTTP ${d.status}`);
  const served = new Set(
    ((d.body as { resources?: { name: string }[] })?.resources ?? []).map((r) => r.name),
  );
  if (!served.has('devices') || !served.has('devicemodels')) return 'absent';
  const r = await request(
    `${DEVICES_PATH}?limit=1&fieldSelector=${encodeURIComponent(`spec.nodeName=${nodeName}`)}`,
  );
  if (r.status === 404) return 'absent';
  if (r.status === 403) return 'forbidden';
  if (r.status === 200) return { fieldSelector: true };
  // 400 "field label not supported": custom resources filter on metadata.name/namespace only.
  if (r.status === 400) return { fieldSelector: false };
  throw new Error(`GET ${DEVICES_PATH}: HTTP ${r.status}`);
}

/**
 * The cloud's devices and models as reflector stores. Devices: those whose `spec.nodeName` is this
 * node (filtered here when the API server cannot). Models: every model is seen, only those the
 * node's devices reference are kept, once the model list arrived (before, nothing is removed).
 */
export class CloudDevices {
  readonly #store: Store;
  readonly #node: string;
  readonly #log: Logger;
  readonly #models = new Map<string, DeviceModel>();
  readonly #warned = new Set<string>();
  #modelsListed = false;
  #devicesRv: string | undefined;
  #modelsRv: string | undefined;

  constructor(o: { store: Store; nodeName: string; log: Logger }) {
    this.#store = o.store;
    this.#node = o.nodeName;
    this.#log = o.log;
  }

  readonly devices: ReflectorStore = {
    resourceVersion: () => this.#devicesRv,
    replace: (items, rv) => {
      this.#devicesRv = rv;
      this.#tx(() => {
        const mine = new Set<string>();
        for (const d of items as Device[]) {
          if (d.spec?.nodeName !== this.#node) continue;
          mine.add(key(d));
          this.#putDevice(d);
        }
        for (const r of this.#store.devices.records({ source: 'cloud' }))
          if (!mine.has(key(r.object))) this.#removeDevice(r.object);
        this.#syncModels();
      });
    },
    apply: (type, obj, rv) => {
      this.#devicesRv = rv;
      this.#tx(() => {
        const d = obj as Device;
        // A device moved to another node is gone from this one.
        if (type === 'DELETED' || d.spec?.nodeName !== this.#node) this.#removeDevice(d);
        else this.#putDevice(d);
        this.#syncModels();
      });
    },
    bookmark: (rv) => {
      this.#devicesRv = rv;
    },
  };

  readonly models: ReflectorStore = {
    resourceVersion: () => this.#modelsRv,
    replace: (items, rv) => {
      this.#modelsRv = rv;
      this.#models.clear();
      for (const m of items as DeviceModel[]) this.#models.set(key(m), m);
      this.#modelsListed = true;
      this.#tx(() => this.#syncModels());
    },
    apply: (type, obj, rv) => {
      this.#modelsRv = rv;
      if (type === 'DELETED') this.#models.delete(key(obj));
      else this.#models.set(key(obj), obj as DeviceModel);
      this.#tx(() => this.#syncModels());
    },
    bookmark: (rv) => {
      this.#modelsRv = rv;
    },
  };

  #tx(fn: () => void): void {
    this.#store.metabase.sqlite.transaction(fn)();
  }

  #foreign(kind: string, o: KubeObject, source: string): void {
    const k = `${kind}/${key(o)}`;
    if (this.#warned.has(k)) return;
    this.#warned.add(k);
    this.#log.warn(
      { object: k, source },
      'a cloud object has the name of a local one; the local one is kept and the cloud one not synced',
    );
  }

  #putDevice(d: Device): void {
    const ns = d.metadata.namespace ?? 'default';
    const rec = this.#store.devices.record(ns, d.metadata.name ?? '');
    if (rec && rec.source !== 'cloud') this.#foreign('Device', d, rec.source);
    else this.#store.devices.apply(cloudObject(d, 'Device'), 'cloud', null);
  }

  #removeDevice(d: KubeObject): void {
    const ns = d.metadata.namespace ?? 'default';
    const name = d.metadata.name ?? '';
    if (this.#store.devices.record(ns, name)?.source !== 'cloud') return;
    this.#store.devices.remove(ns, name);
    // Its pending status has nowhere to go.
    this.#store.outbox.discard('device-status', `${ns}/${name}`);
  }

  #syncModels(): void {
    if (!this.#modelsListed) return;
    const wanted = new Set<string>();
    for (const r of this.#store.devices.records({ source: 'cloud' })) {
      const ref = r.object.spec.deviceModelRef?.name;
      if (ref) wanted.add(`${r.object.metadata.namespace ?? 'default'}/${ref}`);
    }
    for (const k of wanted) {
      const m = this.#models.get(k);
      if (!m) continue;
      const rec = this.#store.deviceModels.record(m.metadata.namespace ?? 'default', m.metadata.name ?? '');
      if (rec && rec.source !== 'cloud') this.#foreign('DeviceModel', m, rec.source);
      else this.#store.deviceModels.apply(cloudObject(m, 'DeviceModel'), 'cloud', null);
    }
    for (const r of this.#store.deviceModels.records({ source: 'cloud' })) {
      const k = key(r.object);
      if (!wanted.has(k) || !this.#models.has(k))
        this.#store.deviceModels.remove(
          r.object.metadata.namespace ?? 'default',
          r.object.metadata.name ?? '',
        );
    }
  }
}

/** The cloud's object as the node keeps it: typed, without status and server bookkeeping. */
function cloudObject<T extends KubeObject>(o: T, kind: string): T {
  const { status: _s, ...rest } = o as T & { status?: unknown };
  const { resourceVersion: _rv, managedFields: _mf, ...metadata } = o.metadata;
  return { ...rest, apiVersion: DEVICE_API_VERSION, kind, metadata } as unknown as T;
}
