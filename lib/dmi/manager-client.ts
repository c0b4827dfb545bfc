import { Client, credentials } from '@grpc/grpc-js';
import { unaryCall } from '#lib/grpc/unary.ts';
import { managerService, unixTarget } from './grpc.ts';
import type { PbDevice, PbDeviceModel, PbTwin } from './types.ts';

export interface MapperInfo {
  name: string;
  protocol: string;
  /** The mapper's own DeviceMapperService socket. */
  address: string;
  version?: string;
  apiVersion?: string;
  state?: string;
}

/** A mapper's client of the node's DeviceManagerService; failures reject with the grpc-js error. */
export class ManagerClient {
  readonly #client: Client;
  readonly #timeoutMs: number;

  constructor(socket: string, opts: { timeoutMs?: number } = {}) {
    this.#timeoutMs = opts.timeoutMs ?? 10_000;
    this.#client = new Client(unixTarget(socket), credentials.createInsecure(), {
      'grpc.max_reconnect_backoff_ms': 2_000,
      'grpc.initial_reconnect_backoff_ms': 200,
    });
  }

  /** MapperRegister; with `withData` the answer holds the mapper's devices and models. */
  register(
    info: MapperInfo,
    withData: boolean,
  ): Promise<{ modelList: PbDeviceModel[]; deviceList: PbDevice[] }> {
    return this.#call('MapperRegister', {
      withData,
      mapper: {
        name: info.name,
        version: info.version ?? '',
        apiVersion: info.apiVersion ?? 'v1beta1',
        protocol: info.protocol,
        address: Buffer.from(info.address, 'utf8'),
        state: info.state ?? 'running',
      },
    });
  }

  async reportStatus(namespace: string, name: string, twins: PbTwin[]): Promise<void> {
    await this.#call('ReportDeviceStatus', {
      deviceName: name,
      deviceNamespace: namespace,
      reportedDevice: { twins, reportToCloud: false, reportCycle: '0' },
    });
  }

  async reportState(namespace: string, name: string, state: string): Promise<void> {
    await this.#call('ReportDeviceStates', { deviceName: name, deviceNamespace: namespace, state });
  }

  close(): void {
    this.#client.close();
  }

  #call<Res>(method: string, req: object): Promise<Res> {
    return unaryCall<Res>(this.#client, managerService()[method]!, req, this.#timeoutMs);
  }
}
