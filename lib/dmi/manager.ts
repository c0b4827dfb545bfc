import { isDeepStrictEqual } from 'node:util';
import { conflict, notFound, type StatusCause, StatusError, unavailable } from '#lib/kube/status.ts';
import type { Logger } from '#lib/log.ts';
import type { Store } from '#lib/store/index.ts';
import { deviceToPb, modelToPb, twinsFromPb } from './convert.ts';
import { desiredChanges, deviceEvent, observedEvents, stateEvent } from './events.ts';
import { DmiError } from './grpc.ts';
import type { MapperRegistry } from './registry.ts';
import {
  DEVICE_GROUP,
  type Device,
  type DeviceModel,
  type PbDevice,
  type PbDeviceModel,
  type PbMapperInfo,
  type PbTwin,
} from './types.ts';
import { invalidObject, validateDevice } from './validate.ts';

export interface DeviceManagerOptions {
  store: Store;
  registry: MapperRegistry;
  log: Logger;
  /** Asks the reconciler to push what is pending (after a registration). */
  kick?: () => void;
}

const key = (ns: string, name: string) => `${ns}/${name}`;

/**
 * The DeviceManagerService behind the DMI socket and the device edits behind the API: mapper
 * registration, twin and state reports into the metabase, and edits applied through the mapper
 * before they are stored.
 */
export class DeviceManager {
  readonly #o: DeviceManagerOptions;
  readonly #locks = new Map<string, Promise<unknown>>();

  constructor(opts: DeviceManagerOptions) {
    this.#o = opts;
  }

  /** The mapper serving a protocol, for the API's MAPPER column. */
  mapperFor(protocol: string) {
    return this.#o.registry.forProtocol(protocol)?.mapper;
  }

  /** MapperRegister: stores the mapper; with `withData`, answers its devices and their models. */
  mapperRegister(
    withData: boolean,
    info: PbMapperInfo | null,
  ): { modelList: PbDeviceModel[]; deviceList: PbDevice[] } {
    if (!info) throw new DmiError('INVALID_ARGUMENT', 'mapper is required');
    if (!info.protocol)
      throw new DmiError(
        'INVALID_ARGUMENT',
        `fail to register mapper ${info.name} because the protocol is nil`,
      );
    if (!info.name) throw new DmiError('INVALID_ARGUMENT', 'mapper name is required');
    const address = Buffer.from(info.address ?? []).toString('utf8');
    if (!address) throw new DmiError('INVALID_ARGUMENT', `mapper ${info.name} has no address`);
    const { store, registry } = this.#o;
    registry.register({
      name: info.name,
      protocol: info.protocol,
      address,
      version: info.version || null,
      apiVersion: info.apiVersion || null,
    });
    const answer = { modelList: [] as PbDeviceModel[], deviceList: [] as PbDevice[] };
    if (withData) {
      const devices = store.devices.records({ where: { protocol: info.protocol } });
      const models = new Map<string, DeviceModel>();
      for (const { object: d } of devices) {
        answer.deviceList.push(deviceToPb(d));
        const ref = d.spec.deviceModelRef?.name;
        const m = ref ? store.deviceModels.get(d.metadata.namespace!, ref) : undefined;
        if (m) models.set(key(d.metadata.namespace!, ref!), m);
      }
      for (const m of store.deviceModels.records({ where: { protocol: info.protocol } }))
        models.set(key(m.object.metadata.namespace!, m.object.metadata.name!), m.object);
      answer.modelList = [...models.values()].map(modelToPb);
      // The mapper now holds exactly these: nothing is pending for it.
      for (const { object: d } of devices)
        store.devices.setBook(d.metadata.namespace!, d.metadata.name!, (b) => ({
          ...b,
          pushedGeneration: d.metadata.generation ?? 1,
        }));
      for (const m of models.values())
        store.deviceModels.setBook(m.metadata.namespace!, m.metadata.name!, (b) => ({
          ...b,
          pushedGeneration: m.metadata.generation ?? 1,
        }));
    }
    this.#o.kick?.();
    return answer;
  }

  /** ReportDeviceStatus: the twins a mapper read, merged into the device's status. */
  reportDeviceStatus(name: string, namespace: string, twins: readonly PbTwin[] | undefined): void {
    if (!twins) throw new DmiError('INVALID_ARGUMENT', 'ReportDeviceStatusRequest does not have twin data');
    if (!name) throw new DmiError('INVALID_ARGUMENT', 'deviceName is required');
    const { store } = this.#o;
    const reported = twinsFromPb(twins);
    const res = store.devices.reportTwins(namespace || 'default', name, reported);
    if (!res) throw new DmiError('NOT_FOUND', `device ${namespace || 'default'}/${name} not found`);
    observedEvents(store.events, res.device, res.before, res.device.status?.twins ?? []);
  }

  /** ReportDeviceStates: the device's state (ok, online, offline, ...). */
  reportDeviceStates(name: string, namespace: string, state: string): void {
    if (!name || !state) throw new DmiError('INVALID_ARGUMENT', 'ReportDeviceStatesRequest is invalid data');
    const { store } = this.#o;
    const res = store.devices.reportState(namespace || 'default', name, state);
    if (!res) throw new DmiError('NOT_FOUND', `device ${namespace || 'default'}/${name} not found`);
    if (res.before !== state) stateEvent(store.events, res.device, res.before, state);
  }

  /**
   * Edits a device: `change` turns the stored device into the wanted one (a PUT body, a merge patch
   * applied). The result is validated against the device's model, a stale resourceVersion is a 409,
   * a new spec goes to the mapper first (unreachable: 503, nothing stored), then it is stored and an
   * event recorded. Edits of one device are serialized.
   */
  editDevice(namespace: string, name: string, change: (current: Device) => Device): Promise<Device> {
    const k = key(namespace, name);
    const prev = this.#locks.get(k) ?? Promise.resolve();
    const run = prev.catch(() => {}).then(() => this.#edit(namespace, name, change));
    this.#locks.set(k, run);
    void run.finally(() => this.#locks.get(k) === run && this.#locks.delete(k)).catch(() => {});
    return run;
  }

  async #edit(namespace: string, name: string, change: (current: Device) => Device): Promise<Device> {
    const { store, log } = this.#o;
    const rec = store.devices.record(namespace, name);
    if (!rec) throw notFound('devices', name, DEVICE_GROUP);
    const current = rec.object;
    const wanted = change(structuredClone(current));
    const what = `devices.${DEVICE_GROUP}`;
    const rv = wanted.metadata?.resourceVersion;
    if (rv && rv !== current.metadata.resourceVersion) {
      throw conflict(
        `Operation cannot be fulfilled on ${what} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
        { name, group: DEVICE_GROUP, kind: 'devices' },
      );
    }
    const causes: StatusCause[] = [];
    if (wanted.metadata?.name !== undefined && wanted.metadata.name !== name)
      causes.push({
        field: 'metadata.name',
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${wanted.metadata.name}": field is immutable`,
      });
    if ((wanted.metadata?.namespace ?? namespace) !== namespace)
      causes.push({
        field: 'metadata.namespace',
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${wanted.metadata.namespace}": field is immutable`,
      });
    if (causes.length) throw invalidObject('Device', name, causes);
    wanted.metadata.name = name;
    wanted.metadata.namespace = namespace;
    const protocol = current.spec.protocol?.protocolName ?? '';
    if (wanted.spec?.protocol?.protocolName !== undefined && wanted.spec.protocol.protocolName !== protocol)
      causes.push({
        field: 'spec.protocol.protocolName',
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${wanted.spec.protocol.protocolName}": field is immutable on the node (the device belongs to the mapper of "${protocol}")`,
      });
    const modelName = wanted.spec?.deviceModelRef?.name;
    const model = modelName ? store.deviceModels.get(namespace, modelName) : undefined;
    causes.push(...validateDevice(wanted, model));
    if (modelName && !model)
      causes.push({
        field: 'spec.deviceModelRef.name',
        reason: 'FieldValueNotFound',
        message: `Not found: "${modelName}": no such device model in namespace "${namespace}"`,
      });
    if (causes.length) throw invalidObject('Device', name, causes);
    // Status belongs to the mapper's reports (the status subresource): an edit never changes it.
    wanted.status = current.status ?? {};
    if (current.status === undefined) delete wanted.status;

    const specChanged = !isDeepStrictEqual(stripUndefined(wanted.spec), stripUndefined(current.spec));
    let generation = current.metadata.generation ?? 1;
    if (specChanged) {
      generation += 1;
      const target = this.#o.registry.forProtocol(protocol);
      if (!target)
        throw unavailable(
          `no mapper is registered for protocol "${protocol}": ${what} "${name}" cannot be changed`,
        );
      const sent = { ...wanted, metadata: { ...wanted.metadata, generation } };
      try {
        if (rec.book.pushedGeneration === undefined) await target.client.registerDevice(sent);
        else await target.client.updateDevice(sent);
        this.#o.registry.mark(target.mapper, 'Running');
      } catch (e) {
        if (e instanceof StatusError && e.code === 503)
          this.#o.registry.mark(target.mapper, 'Unreachable', e.message);
        log.warn(
          { device: `${namespace}/${name}`, mapper: target.mapper.name, err: (e as Error).message },
          'device edit refused',
        );
        throw e;
      }
    }
    const stored = store.devices.replace(wanted, (b) =>
      specChanged ? { ...b, pushedGeneration: generation } : b,
    );
    if (!stored) throw notFound('devices', name, DEVICE_GROUP);
    if (specChanged) {
      const changes = desiredChanges(current, stored);
      const mapper = this.#o.registry.forProtocol(protocol)?.mapper.name ?? '';
      deviceEvent(
        store.events,
        stored,
        'Normal',
        'Updated',
        changes.length
          ? `desired ${changes.join(', ')} (applied by mapper "${mapper}")`
          : `spec updated (applied by mapper "${mapper}")`,
      );
    }
    return stored;
  }
}

// The spec as JSON would carry it: an explicit undefined is no field.
const stripUndefined = (v: unknown): unknown => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));
