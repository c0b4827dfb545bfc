import { Client, credentials } from '@grpc/grpc-js';
import { unaryCall } from '#lib/grpc/unary.ts';
import { unavailable } from '#lib/kube/status.ts';
import { deviceToPb, modelToPb } from './convert.ts';
import { mapperError, mapperService, unixTarget } from './grpc.ts';
import type { Device, DeviceModel, PbDevice } from './types.ts';

export interface MapperClientOptions {
  name: string;
  /** The mapper's DeviceMapperService socket. */
  address: string;
  /** Deadline of each call. Default 10 s, as edgecore's DMI client. */
  timeoutMs?: number;
}

const device = (d: Device) => ({ kind: 'devices', name: d.metadata.name ?? '' });
const model = (m: DeviceModel) => ({ kind: 'devicemodels', name: m.metadata.name ?? '' });

/** A DeviceMapperService client for one registered mapper; every failure is a Status error. */
export class MapperClient {
  readonly name: string;
  readonly address: string;
  readonly #client: Client;
  readonly #timeoutMs: number;

  constructor(opts: MapperClientOptions) {
    this.name = opts.name;
    this.address = opts.address;
    this.#timeoutMs = opts.timeoutMs ?? 10_000;
    // A short reconnect backoff finds a restarted mapper quickly.
    this.#client = new Client(unixTarget(opts.address), credentials.createInsecure(), {
      'grpc.max_reconnect_backoff_ms': 2_000,
      'grpc.initial_reconnect_backoff_ms': 200,
    });
  }

  /** Resolves once the mapper's socket accepts a connection; rejects with 503 after `timeoutMs`. */
  ready(timeoutMs = this.#timeoutMs): Promise<void> {
    return new Promise((resolve, reject) =>
      this.#client.waitForReady(Date.now() + timeoutMs, (err) =>
        err
          ? reject(
              unavailable(`mapper "${this.name}" at ${this.address} not reachable within ${timeoutMs} ms`),
            )
          : resolve(),
      ),
    );
  }

  close(): void {
    this.#client.close();
  }

  async registerDevice(d: Device): Promise<void> {
    await this.#call('RegisterDevice', { device: deviceToPb(d) }, device(d));
  }

  async updateDevice(d: Device): Promise<void> {
    await this.#call('UpdateDevice', { device: deviceToPb(d) }, device(d));
  }

  async removeDevice(namespace: string, name: string): Promise<void> {
    await this.#call(
      'RemoveDevice',
      { deviceName: name, deviceNamespace: namespace },
      { kind: 'devices', name },
    );
  }

  async createDeviceModel(m: DeviceModel): Promise<void> {
    await this.#call('CreateDeviceModel', { model: modelToPb(m) }, model(m));
  }

  async updateDeviceModel(m: DeviceModel): Promise<void> {
    await this.#call('UpdateDeviceModel', { model: modelToPb(m) }, model(m));
  }

  async removeDeviceModel(namespace: string, name: string): Promise<void> {
    await this.#call(
      'RemoveDeviceModel',
      { modelName: name, modelNamespace: namespace },
      { kind: 'devicemodels', name },
    );
  }

  /** The device as the mapper holds it (with its current twins). */
  async getDevice(namespace: string, name: string): Promise<PbDevice | null> {
    const res = await this.#call<{ device: PbDevice | null }>(
      'GetDevice',
      { deviceName: name, deviceNamespace: namespace },
      { kind: 'devices', name },
    );
    return res.device;
  }

  // A mapper that is down fails at once with UNAVAILABLE (→ 503), see unaryCall.
  #call<Res>(method: string, req: object, object: { kind: string; name: string }): Promise<Res> {
    const ctx = { mapper: this.name, address: this.address, method, object, timeoutMs: this.#timeoutMs };
    return unaryCall<Res>(this.#client, mapperService()[method]!, req, this.#timeoutMs).catch(
      (err: unknown) => {
        throw mapperError(err, ctx);
      },
    );
  }
}
