// Creates and deletes of devices, and every write of device models, through the local API. Each is
// validated against the CRD schema (lib/kube/device-schema.ts) as the API server would, plus the
// node's checks (a device's desired values against its model); the DMI reconciler then brings the
// mapper in line (RegisterDevice, RemoveDevice, Create/Update/RemoveDeviceModel). Objects from a
// manifest file or the cloud keep their owner: deleting them here is refused.
import { invalidObject, validateDevice, validateModel } from '#lib/dmi/validate.ts';
import { DEVICE_API_VERSION, DEVICE_GROUP, type Device, type DeviceModel } from '#lib/kube/devices.ts';
import { badRequest, notFound, type StatusCause } from '#lib/kube/status.ts';
import type { CrdStore } from '#lib/store/crd.ts';
import { applyPatch, isObject, patchType, readBody } from './body.ts';
import type { AppContext } from './env.ts';
import {
  alreadyExists,
  checkNames,
  dryRunOf,
  generatedName,
  modified,
  refuseForeign,
} from './write-options.ts';

type Kind = 'Device' | 'DeviceModel';
const plural = (kind: Kind) => (kind === 'Device' ? 'devices' : 'devicemodels');
const what = (kind: Kind) => `${plural(kind)}.${DEVICE_GROUP}`;

function storeOf(c: AppContext, kind: Kind): CrdStore<Device> | CrdStore<DeviceModel> {
  return kind === 'Device' ? c.var.store.devices : c.var.store.deviceModels;
}

/** Schema and node checks of a device or model; a device's model must exist in its namespace. */
function check(c: AppContext, kind: Kind, obj: Device | DeviceModel, namespace: string): void {
  let causes: StatusCause[];
  if (kind === 'DeviceModel') causes = validateModel(obj as DeviceModel);
  else {
    const d = obj as Device;
    const ref = isObject(d.spec) ? d.spec.deviceModelRef?.name : undefined;
    const model = typeof ref === 'string' ? c.var.store.deviceModels.get(namespace, ref) : undefined;
    causes = validateDevice(d, model);
    if (typeof ref === 'string' && ref && !model)
      causes.push({
        field: 'spec.deviceModelRef.name',
        reason: 'FieldValueNotFound',
        message: `Not found: "${ref}": no such device model in namespace "${namespace}"`,
      });
  }
  if (causes.length) throw invalidObject(kind, obj.metadata?.name ?? '', causes);
}

/** The request body as a Device or DeviceModel of this namespace (400 when it is not an object). */
async function bodyObject(c: AppContext, kind: Kind, namespace: string, name?: string) {
  const body = await readBody(c);
  if (!isObject(body) || !isObject(body.metadata ?? {}))
    throw badRequest(`the body must be a ${kind} object`);
  const obj = body as unknown as Device & DeviceModel;
  obj.metadata ??= {};
  checkNames(obj.metadata, namespace, name);
  obj.apiVersion ??= DEVICE_API_VERSION;
  obj.kind ??= kind;
  obj.metadata.namespace = namespace;
  return obj;
}

/** `POST` of a device or model: validated, stored (source `api`), pushed to its mapper by the reconciler. */
export async function createDeviceObject(c: AppContext, kind: Kind, namespace: string) {
  const obj = await bodyObject(c, kind, namespace);
  const meta = obj.metadata as { name?: string; generateName?: string };
  if (!meta.name && meta.generateName) meta.name = generatedName(meta.generateName);
  check(c, kind, obj, namespace);
  const s = storeOf(c, kind);
  const name = meta.name!;
  if (s.get(namespace, name)) throw alreadyExists(what(kind), name);
  if (dryRunOf(c)) return c.json(obj, 201);
  const created = (s as CrdStore<Device>).create(obj as Device, 'api');
  if (!created) throw alreadyExists(what(kind), name);
  return c.json(created, 201);
}

/** `DELETE` of a device or model (objects of a manifest or the cloud are refused); answers the object. */
export async function deleteDeviceObject(c: AppContext, kind: Kind, namespace: string, name: string) {
  const s = storeOf(c, kind);
  const rec = s.record(namespace, name);
  if (!rec) throw notFound(plural(kind), name, DEVICE_GROUP);
  refuseForeign(what(kind), name, rec);
  const text = await c.req.text();
  let opts: { preconditions?: { uid?: string; resourceVersion?: string }; dryRun?: unknown } = {};
  if (text.trim()) {
    try {
      opts = JSON.parse(text) as typeof opts;
    } catch {
      throw badRequest('the body of the request could not be decoded as DeleteOptions');
    }
  }
  const pre = opts.preconditions;
  if (pre?.uid && pre.uid !== rec.object.metadata.uid) throw modified(what(kind), name);
  if (pre?.resourceVersion && pre.resourceVersion !== rec.object.metadata.resourceVersion)
    throw modified(what(kind), name);
  if (dryRunOf(c, opts)) return c.json(rec.object);
  return c.json(s.remove(namespace, name) ?? rec.object);
}

/** `PUT` or `PATCH` of a model: validated, stored with a new generation when the spec changed. */
export async function writeModel(c: AppContext, namespace: string, name: string, patch: boolean) {
  const s = c.var.store.deviceModels;
  const rec = s.record(namespace, name);
  if (!rec) throw notFound('devicemodels', name, DEVICE_GROUP);
  if (rec.source === 'cloud') refuseForeign(what('DeviceModel'), name, rec);
  let wanted: DeviceModel;
  if (patch) {
    const type = patchType(c, ['merge', 'strategic', 'json']);
    const body = await readBody(c, 'application/json');
    wanted = applyPatch(structuredClone(rec.object), type, body);
  } else wanted = await bodyObject(c, 'DeviceModel', namespace, name);
  if (!isObject(wanted) || !isObject(wanted.metadata))
    throw badRequest('the result must be a DeviceModel object');
  const rv = wanted.metadata.resourceVersion;
  if (rv && rv !== rec.object.metadata.resourceVersion) throw modified(what('DeviceModel'), name);
  wanted.metadata.namespace ??= namespace;
  checkNames(wanted.metadata, namespace, name);
  wanted.metadata.name = name;
  check(c, 'DeviceModel', wanted, namespace);
  if (dryRunOf(c)) return c.json(wanted);
  const stored = s.replace(wanted);
  if (!stored) throw notFound('devicemodels', name, DEVICE_GROUP);
  return c.json(stored);
}
