import { DEVICE_API_VERSION, DEVICE_GROUP, type Device, type DeviceModel } from '#lib/kube/devices.ts';
import { deviceModelTable, deviceTable } from '#lib/kube/printers/devices.ts';
import { badRequest, notFound, unavailable } from '#lib/kube/status.ts';
import { parseIncludeObject } from '#lib/kube/table.ts';
import type { KubeObject } from '#lib/kube/types.ts';
import type { CrdStore } from '#lib/store/crd.ts';
import type { Store } from '#lib/store/index.ts';
import { applyPatch, isObject, patchType, readBody } from './body.ts';
import type { AppContext } from './env.ts';
import type { Listable, Page } from './list.ts';
import { wantsTable } from './negotiate.ts';
import { refuseForeign } from './write-options.ts';

// Custom resources index only metadata for field selectors.
const metadataFields = {
  'metadata.name': (o: KubeObject) => o.metadata.name,
  'metadata.namespace': (o: KubeObject) => o.metadata.namespace,
};

function page<T extends KubeObject>(
  s: CrdStore<T & { spec: unknown }>,
  namespace: string | undefined,
  eq: Map<string, string>,
  after?: [string, string],
  limit?: number,
): Page<T> {
  const ns = namespace ?? eq.get('metadata.namespace');
  const name = eq.get('metadata.name');
  if (ns !== undefined && name !== undefined && !after) {
    const one = s.get(ns, name);
    return { items: one ? [one] : [], resourceVersion: s.resourceVersion };
  }
  const all = s.list({ namespace: ns, ...(after ? { after } : {}) });
  if (limit === undefined || all.items.length <= limit) return all;
  const items = all.items.slice(0, limit);
  const last = items[limit - 1]!.metadata;
  return { items, resourceVersion: all.resourceVersion, next: [last.namespace!, last.name!] };
}

/** The MAPPER column's lookup: one read of the mappers table per Table. */
const mapperLookup = (store: Store) => {
  const mappers = store.mappers.list();
  return (protocol: string) => mappers.find((m) => m.protocol === protocol);
};

/** Devices as a listable resource. */
export const devicesResource = (store: Store): Listable<Device> => ({
  resource: 'devices',
  listKind: 'DeviceList',
  apiVersion: DEVICE_API_VERSION,
  fields: metadataFields,
  read: (namespace, eq, after, limit) => page(store.devices, namespace, eq, after, limit),
  table: (items, now, opts) => deviceTable(items, now, mapperLookup(store), opts),
});

/** Device models as a listable resource. */
export const deviceModelsResource = (store: Store): Listable<DeviceModel> => ({
  resource: 'devicemodels',
  listKind: 'DeviceModelList',
  apiVersion: DEVICE_API_VERSION,
  fields: metadataFields,
  read: (namespace, eq, after, limit) => page(store.deviceModels, namespace, eq, after, limit),
  table: (items, now, opts) => deviceModelTable(items, now, opts),
});

/** `GET` of one device or model: the object, or a Table row when kubectl asks for one. */
export function getOne(c: AppContext, kind: 'devices' | 'devicemodels', namespace: string, name: string) {
  const { store } = c.var;
  const obj =
    kind === 'devices' ? store.devices.get(namespace, name) : store.deviceModels.get(namespace, name);
  if (!obj) throw notFound(kind, name, DEVICE_GROUP);
  if (!wantsTable(c)) return c.json(obj);
  const opts = {
    includeObject: parseIncludeObject(c.req.query('includeObject')),
    resourceVersion: obj.metadata.resourceVersion,
  };
  return c.json(
    kind === 'devices'
      ? deviceTable([obj as Device], c.var.now(), mapperLookup(store), opts)
      : deviceModelTable([obj as DeviceModel], c.var.now(), opts),
  );
}

function manager(c: AppContext, namespace: string, name: string) {
  // A device the cloud defines is changed there (its spec comes back with every watch event).
  const rec = c.var.store.devices.record(namespace, name);
  if (rec?.source === 'cloud') refuseForeign(`devices.${DEVICE_GROUP}`, name, rec);
  if (!c.var.dmi) throw unavailable('device management (DMI) is not running on this node');
  return c.var.dmi;
}

/** `PUT` of a device (kubectl replace, keadm ctl edit): the whole object, applied through its mapper. */
export async function putDevice(c: AppContext, namespace: string, name: string) {
  const dmi = manager(c, namespace, name);
  const body = await readBody(c, c.req.header('content-type') ?? '');
  if (!isObject(body) || !isObject(body.metadata))
    throw badRequest('the body must be a Device object with metadata');
  return c.json(await dmi.editDevice(namespace, name, () => body as Device));
}

/**
 * `PATCH` of a device: a JSON merge patch (kubectl edit and `patch --type merge` on custom
 * resources), a JSON patch (client-node's default for custom objects) or a strategic merge patch,
 * which for a Device (no merge keys) merges the same way.
 */
export async function patchDevice(c: AppContext, namespace: string, name: string) {
  const dmi = manager(c, namespace, name);
  const type = patchType(c, ['merge', 'strategic', 'json']);
  const patch = await readBody(c, 'application/json');
  if (type !== 'json' && !isObject(patch)) throw badRequest('the patch must be a JSON object');
  const edited = await dmi.editDevice(namespace, name, (current) => applyPatch(current, type, patch));
  return c.json(edited);
}
