import { parse as parseYaml } from 'yaml';
import { DEVICE_API_VERSION, DEVICE_GROUP, type Device, type DeviceModel } from '#lib/kube/devices.ts';
import { applyMergePatch } from '#lib/kube/merge-patch.ts';
import { deviceModelTable, deviceTable } from '#lib/kube/printers/devices.ts';
import { badRequest, notFound, StatusError, unavailable } from '#lib/kube/status.ts';
import { applyStrategicMergePatch } from '#lib/kube/strategic-merge.ts';
import { parseIncludeObject } from '#lib/kube/table.ts';
import type { KubeObject } from '#lib/kube/types.ts';
import type { CrdStore } from '#lib/store/crd.ts';
import type { Store } from '#lib/store/index.ts';
import type { AppContext } from './env.ts';
import type { Listable, Page } from './list.ts';
import { wantsTable } from './negotiate.ts';

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

// The request body as JSON (or YAML, which the API server also accepts); malformed is a 400.
async function readBody(c: AppContext, type: string): Promise<unknown> {
  const text = await c.req.text();
  try {
    return /yaml/.test(type) ? parseYaml(text) : JSON.parse(text);
  } catch (e) {
    const what = /yaml/.test(type) ? 'YAML' : 'JSON';
    throw badRequest(
      `the body of the request could not be decoded as ${what}: ${(e as Error).message.split('\n')[0]}`,
    );
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function manager(c: AppContext) {
  if (!c.var.dmi) throw unavailable('device management (DMI) is not running on this node');
  return c.var.dmi;
}

/** `PUT` of a device (kubectl replace, keadm ctl edit): the whole object, applied through its mapper. */
export async function putDevice(c: AppContext, namespace: string, name: string) {
  const dmi = manager(c);
  const body = await readBody(c, c.req.header('content-type') ?? '');
  if (!isObject(body) || !isObject(body.metadata))
    throw badRequest('the body must be a Device object with metadata');
  return c.json(await dmi.editDevice(namespace, name, () => body as Device));
}

/**
 * `PATCH` of a device: a JSON merge patch (kubectl edit and `patch --type merge` on custom
 * resources) or a strategic merge patch, which for a Device (no merge keys) merges the same way.
 */
export async function patchDevice(c: AppContext, namespace: string, name: string) {
  const dmi = manager(c);
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim();
  const merge = type === 'application/merge-patch+json';
  if (!merge && type !== 'application/strategic-merge-patch+json') {
    throw new StatusError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/merge-patch+json, application/strategic-merge-patch+json`,
    );
  }
  const patch = await readBody(c, type);
  if (!isObject(patch)) throw badRequest('the patch must be a JSON object');
  const edited = await dmi.editDevice(namespace, name, (current) =>
    merge ? (applyMergePatch(current, patch) as Device) : applyStrategicMergePatch(current, patch),
  );
  return c.json(edited);
}
