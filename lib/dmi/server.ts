import { rmSync } from 'node:fs';
import { Server, ServerCredentials, type UntypedServiceImplementation } from '@grpc/grpc-js';
import type { Logger } from '#lib/log.ts';
import { managerService, unary, unixTarget } from './grpc.ts';
import type { DeviceManager } from './manager.ts';
import { prepareSocket } from './socket.ts';
import type { PbMapperInfo, PbTwin } from './types.ts';

/** Serves DeviceManagerService on a unix socket for the node's mappers. */
export class DmiServer {
  readonly socket: string;
  readonly #server = new Server();
  readonly #log: Logger;

  constructor(opts: { socket: string; manager: DeviceManager; log: Logger }) {
    this.socket = opts.socket;
    this.#log = opts.log;
    const m = opts.manager;
    const log = opts.log;
    const impl: UntypedServiceImplementation = {
      MapperRegister: unary(log, 'MapperRegister', (r: { withData: boolean; mapper: PbMapperInfo | null }) =>
        m.mapperRegister(r.withData, r.mapper),
      ),
      ReportDeviceStatus: unary(
        log,
        'ReportDeviceStatus',
        (r: { deviceName: string; deviceNamespace: string; reportedDevice: { twins: PbTwin[] } | null }) =>
          m.reportDeviceStatus(r.deviceName, r.deviceNamespace, r.reportedDevice?.twins),
      ),
      ReportDeviceStates: unary(
        log,
        'ReportDeviceStates',
        (r: { deviceName: string; deviceNamespace: string; state: string }) =>
          m.reportDeviceStates(r.deviceName, r.deviceNamespace, r.state),
      ),
    };
    this.#server.addService(managerService(), impl);
  }

  /** Binds the socket, replacing a stale socket file; refuses one a live process still serves. */
  async start(): Promise<void> {
    await prepareSocket(this.socket, 'DMI');
    await new Promise<void>((resolve, reject) =>
      this.#server.bindAsync(unixTarget(this.socket), ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    this.#log.info({ socket: this.socket }, 'DMI server listening');
  }

  /** Stops serving (in-flight calls get a second to finish) and removes the socket file. */
  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => {
        this.#server.forceShutdown();
        resolve();
      }, 1000);
      this.#server.tryShutdown(() => {
        clearTimeout(force);
        resolve();
      });
    });
    rmSync(this.socket, { force: true });
  }
}
