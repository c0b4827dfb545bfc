// The reference mapper shipped with Outpost (`outpost mapper virtual`): a DMI DeviceMapperService over
// simulated devices, the peer the device walkthrough and the tests use. Each device of its protocol is
// a thermometer: `temperature` (read-only) drifts toward `target-temperature` while `switch` is on and
// toward the ambient temperature while it is off; every other property holds the last desired value.
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { Server, ServerCredentials, type ServiceError } from '@grpc/grpc-js';
import type { Logger } from '#lib/log.ts';
import { deviceFromPb, modelFromPb } from './convert.ts';
import { DmiError, mapperService, unary, unixTarget } from './grpc.ts';
import { ManagerClient } from './manager-client.ts';
import { prepareSocket } from './socket.ts';
import type { Device, DeviceModel, ModelProperty, PbDevice, PbDeviceModel, PbTwin } from './types.ts';
import { twinValueProblem } from './validate.ts';

export interface VirtualMapperOptions {
  /** This mapper's DeviceMapperService socket. */
  socket: string;
  /** Outpost's DMI socket. */
  dmiSocket: string;
  name?: string;
  protocol?: string;
  /** Report cycle when a device's properties set none (their reportCycle is in nanoseconds). */
  reportCycleMs?: number;
  /** Ask for the devices at registration (MapperRegister withData). Default true. */
  withData?: boolean;
  log: Logger;
}

interface Sim {
  device: Device;
  /** Current value per property. */
  values: Map<string, string>;
  /** The desired value last received per property (reported back as observedDesired). */
  observed: Map<string, string>;
  timer?: NodeJS.Timeout;
}

const key = (ns: string, name: string) => `${ns || 'default'}/${name}`;
const DEFAULTS: Record<string, string> = { INT: '0', FLOAT: '0', DOUBLE: '0', BOOLEAN: 'false' };

export class VirtualMapper {
  readonly #o: Required<Omit<VirtualMapperOptions, 'log'>> & { log: Logger };
  readonly #server = new Server();
  readonly #devices = new Map<string, Sim>();
  readonly #models = new Map<string, DeviceModel>();
  readonly #dmi: ManagerClient;
  #stopped = false;
  #failing = false;

  constructor(opts: VirtualMapperOptions) {
    // The address Outpost dials: absolute, since Outpost's working directory is not this one.
    this.#o = {
      name: 'virtual-mapper',
      protocol: 'virtual',
      reportCycleMs: 1000,
      withData: true,
      ...opts,
      socket: resolve(opts.socket),
    };
    this.#dmi = new ManagerClient(opts.dmiSocket, { timeoutMs: 5_000 });
    const log = opts.log;
    this.#server.addService(mapperService(), {
      RegisterDevice: unary(log, 'RegisterDevice', (r: { device: PbDevice | null }) => {
        const d = this.#upsert(r.device, false);
        return { deviceName: d.metadata.name, deviceNamespace: d.metadata.namespace };
      }),
      UpdateDevice: unary(
        log,
        'UpdateDevice',
        (r: { device: PbDevice | null }) => void this.#upsert(r.device, true),
      ),
      RemoveDevice: unary(log, 'RemoveDevice', (r: { deviceName: string; deviceNamespace: string }) => {
        this.#remove(key(r.deviceNamespace, r.deviceName));
      }),
      CreateDeviceModel: unary(log, 'CreateDeviceModel', (r: { model: PbDeviceModel | null }) => {
        const m = this.#addModel(r.model);
        return { deviceModelName: m.metadata.name, deviceModelNamespace: m.metadata.namespace };
      }),
      UpdateDeviceModel: unary(
        log,
        'UpdateDeviceModel',
        (r: { model: PbDeviceModel | null }) => void this.#addModel(r.model),
      ),
      RemoveDeviceModel: unary(
        log,
        'RemoveDeviceModel',
        (r: { modelName: string; modelNamespace: string }) => {
          this.#models.delete(key(r.modelNamespace, r.modelName));
        },
      ),
      GetDevice: unary(log, 'GetDevice', (r: { deviceName: string; deviceNamespace: string }) => {
        const sim = this.#devices.get(key(r.deviceNamespace, r.deviceName));
        if (!sim) throw new DmiError('NOT_FOUND', `device ${key(r.deviceNamespace, r.deviceName)} not found`);
        const twins = this.#twins(sim);
        return {
          device: {
            name: sim.device.metadata.name,
            namespace: sim.device.metadata.namespace,
            status: { twins },
          },
        };
      }),
    });
  }

  /** The simulated devices by `namespace/name`, with their current values (for tests and logs). */
  get devices(): ReadonlyMap<string, { device: Device; values: ReadonlyMap<string, string> }> {
    return this.#devices;
  }

  /** Serves the mapper socket, then registers with Outpost (retrying until it answers). */
  async start(): Promise<void> {
    await prepareSocket(this.#o.socket, 'mapper');
    await new Promise<void>((resolve, reject) =>
      this.#server.bindAsync(unixTarget(this.#o.socket), ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    this.#o.log.info({ socket: this.#o.socket, protocol: this.#o.protocol }, 'virtual mapper serving');
    await this.#register();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const sim of this.#devices.values()) clearInterval(sim.timer);
    await new Promise<void>((resolve) => this.#server.tryShutdown(() => resolve()));
    this.#dmi.close();
    rmSync(this.#o.socket, { force: true });
  }

  async #register(): Promise<void> {
    const info = {
      name: this.#o.name,
      protocol: this.#o.protocol,
      address: this.#o.socket,
      version: '1.0.0',
      apiVersion: 'v1beta1',
    };
    for (let attempt = 1; !this.#stopped; attempt++) {
      try {
        const res = await this.#dmi.register(info, this.#o.withData);
        for (const m of res.modelList) this.#addModel(m);
        for (const d of res.deviceList) this.#upsert(d, true);
        this.#o.log.info(
          { outpost: this.#o.dmiSocket, devices: res.deviceList.length, models: res.modelList.length },
          'registered with Outpost',
        );
        return;
      } catch (e) {
        if (attempt === 1)
          this.#o.log.warn({ err: (e as ServiceError).details }, 'Outpost not reachable yet, retrying');
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  #addModel(pb: PbDeviceModel | null): DeviceModel {
    if (!pb?.name) throw new DmiError('INVALID_ARGUMENT', 'model is required');
    const m = modelFromPb(pb);
    this.#models.set(key(m.metadata.namespace!, m.metadata.name!), m);
    return m;
  }

  #modelProperty(d: Device, name: string): ModelProperty | undefined {
    const m = this.#models.get(key(d.metadata.namespace!, d.spec.deviceModelRef?.name ?? ''));
    return m?.spec.properties?.find((p) => p.name === name);
  }

  // RegisterDevice keeps a device it already has (as the mapper framework does); UpdateDevice and a
  // registration answer apply the spec, desired values included.
  #upsert(pb: PbDevice | null, update: boolean): Device {
    if (!pb?.name) throw new DmiError('INVALID_ARGUMENT', 'device is required');
    const d = deviceFromPb(pb);
    const k = key(d.metadata.namespace!, d.metadata.name!);
    const existing = this.#devices.get(k);
    if (existing && !update) return existing.device;
    // Refuse the whole update before changing anything.
    for (const p of d.spec.properties ?? []) {
      const want = p.desired?.value;
      const mp = this.#modelProperty(d, p.name);
      if (!want || !mp) continue;
      if (mp.accessMode === 'ReadOnly')
        throw new DmiError('INVALID_ARGUMENT', `property ${p.name} is ReadOnly`);
      const problem = twinValueProblem(want, mp);
      if (problem)
        throw new DmiError('INVALID_ARGUMENT', `property ${p.name}: ${JSON.stringify(want)} ${problem}`);
    }
    const sim: Sim = existing ?? { device: d, values: new Map(), observed: new Map() };
    sim.device = d;
    const names = new Set((d.spec.properties ?? []).map((p) => p.name));
    for (const n of [...sim.values.keys()]) if (!names.has(n)) sim.values.delete(n);
    const ambient = String(d.spec.protocol.configData?.ambient ?? 20);
    for (const p of d.spec.properties ?? []) {
      const mp = this.#modelProperty(d, p.name);
      const want = p.desired?.value;
      if (want && mp?.accessMode !== 'ReadOnly') {
        sim.values.set(p.name, want);
        sim.observed.set(p.name, want);
      } else if (!sim.values.has(p.name)) {
        sim.values.set(p.name, p.name === 'temperature' ? ambient : (DEFAULTS[mp?.type ?? ''] ?? ''));
      }
    }
    this.#devices.set(k, sim);
    this.#schedule(sim);
    this.#o.log.info(
      { device: k, values: Object.fromEntries(sim.values) },
      update ? 'device updated' : 'device registered',
    );
    return d;
  }

  #remove(k: string): void {
    const sim = this.#devices.get(k);
    if (!sim) throw new DmiError('NOT_FOUND', `device ${k} not found`);
    clearInterval(sim.timer);
    this.#devices.delete(k);
    this.#o.log.info({ device: k }, 'device removed');
  }

  #schedule(sim: Sim): void {
    clearInterval(sim.timer);
    const cycles = (sim.device.spec.properties ?? []).map((p) => p.reportCycle ?? 0).filter((c) => c > 0);
    const ms = cycles.length ? Math.max(100, Math.min(...cycles) / 1e6) : this.#o.reportCycleMs;
    sim.timer = setInterval(() => void this.#cycle(sim), ms);
    void this.#cycle(sim);
  }

  // One simulation step, then the twins and the state go to Outpost.
  async #cycle(sim: Sim): Promise<void> {
    if (this.#stopped) return;
    if (sim.values.has('temperature')) {
      const on = sim.values.get('switch') === 'true';
      const ambient = Number(sim.device.spec.protocol.configData?.ambient ?? 20);
      const goal = on ? Number(sim.values.get('target-temperature') ?? ambient) : ambient;
      const now = Number(sim.values.get('temperature'));
      const step = Math.sign(goal - now) * Math.min(0.5, Math.abs(goal - now));
      sim.values.set('temperature', (Math.round((now + step) * 10) / 10).toString());
    }
    const { namespace = 'default', name = '' } = sim.device.metadata;
    try {
      await this.#dmi.reportStatus(namespace, name, this.#twins(sim));
      await this.#dmi.reportState(namespace, name, 'ok');
      if (this.#failing) this.#o.log.info({}, 'reporting to Outpost again');
      this.#failing = false;
    } catch (e) {
      if (!this.#failing)
        this.#o.log.warn(
          { device: `${namespace}/${name}`, err: (e as ServiceError).details },
          'report failed',
        );
      this.#failing = true;
    }
  }

  #twins(sim: Sim): PbTwin[] {
    return [...sim.values].map(([propertyName, value]) => ({
      propertyName,
      reported: {
        value,
        metadata: { type: this.#modelProperty(sim.device, propertyName)?.type ?? 'STRING' },
      },
      observedDesired: sim.observed.has(propertyName)
        ? { value: sim.observed.get(propertyName)!, metadata: {} }
        : null,
    }));
  }
}
