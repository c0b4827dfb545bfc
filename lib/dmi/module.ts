import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Clock } from '#lib/clock.ts';
import type { Logger } from '#lib/log.ts';
import type { Store } from '#lib/store/index.ts';
import type { ModuleContext } from '#lib/supervisor/modules.ts';
import { DeviceManager } from './manager.ts';
import { DeviceReconciler } from './reconciler.ts';
import { MapperRegistry } from './registry.ts';
import { DmiServer } from './server.ts';

export interface DmiOptions {
  store: Store;
  log: Logger;
  /** The DeviceManagerService socket (`--dmi-socket`, default `DATA_DIR/dmi.sock`). */
  socket: string;
  clock?: Clock;
  /** Deadline of each call to a mapper (default 10 s). */
  callTimeoutMs?: number;
}

/** The device side of the node: registry, manager (for the API), reconciler and the DMI server. */
export class Dmi {
  readonly socket: string;
  readonly registry: MapperRegistry;
  readonly manager: DeviceManager;
  readonly #o: DmiOptions;
  #reconciler: DeviceReconciler | undefined;
  /** The server listen() bound, until a run serves on it. */
  #bound: DmiServer | undefined;

  constructor(opts: DmiOptions) {
    this.#o = opts;
    this.socket = opts.socket;
    this.registry = new MapperRegistry({
      mappers: opts.store.mappers,
      log: opts.log,
      ...(opts.callTimeoutMs ? { callTimeoutMs: opts.callTimeoutMs } : {}),
    });
    this.manager = new DeviceManager({
      store: opts.store,
      registry: this.registry,
      log: opts.log,
      kick: () => this.#reconciler?.kick(),
    });
  }

  /**
   * Binds the socket before the module runs (the agent's start fails on one that cannot be bound);
   * the first run serves on it, later runs bind their own.
   */
  async listen(): Promise<void> {
    const server = this.#server();
    await server.start();
    this.#bound = server;
  }

  /** Closes the socket listen() bound if no run has taken it (a start that failed later). */
  async close(): Promise<void> {
    const server = this.#bound;
    this.#bound = undefined;
    await server?.stop();
  }

  #server(): DmiServer {
    return new DmiServer({ socket: this.socket, manager: this.manager, log: this.#o.log });
  }

  /** The supervised module body: serve, reload the registered mappers, push what is pending. */
  async run(ctx: ModuleContext): Promise<void> {
    const { store, log, clock } = this.#o;
    const server = this.#bound ?? this.#server();
    const bound = !!this.#bound;
    this.#bound = undefined;
    const reconciler = new DeviceReconciler({
      store,
      registry: this.registry,
      log,
      ...(clock ? { clock } : {}),
    });
    if (!bound) await server.start();
    try {
      this.#reconciler = reconciler;
      reconciler.start();
      ctx.ready();
      // Not awaited before ready: a mapper that is gone must not hold the module (or the node) up.
      void this.registry.reload().then(
        () => reconciler.kick(),
        (e) => ctx.fail(e),
      );
      await new Promise<void>((resolve) =>
        ctx.signal.aborted
          ? resolve()
          : ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
    } finally {
      reconciler.stop();
      await reconciler.idle();
      this.#reconciler = undefined;
      await server.stop();
      this.registry.close();
    }
  }

  /** Resolves when the reconciler has nothing running (tests). */
  idle(): Promise<void> {
    return this.#reconciler?.idle() ?? Promise.resolve();
  }
}

/** Where the DMI socket goes: `--dmi-socket`, else `DATA_DIR/dmi.sock` (a temp path for `:memory:`). */
export function dmiSocketPath(config: { dmiSocket?: string | undefined; dataDir: string }): string {
  if (config.dmiSocket) return resolve(config.dmiSocket);
  if (config.dataDir === ':memory:') return join(tmpdir(), `outpost-dmi-${process.pid}.sock`);
  return resolve(config.dataDir, 'dmi.sock');
}
