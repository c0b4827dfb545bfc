import type { Logger } from '#lib/log.ts';
import type { MapperRecord, MapperState, MapperStore } from '#lib/store/mappers.ts';
import { MapperClient } from './mapper-client.ts';

export interface RegistryOptions {
  mappers: MapperStore;
  log: Logger;
  /** Deadline of each call to a mapper. */
  callTimeoutMs?: number;
  /** How long a connection test waits for a mapper's socket. */
  testTimeoutMs?: number;
}

/**
 * The registered mappers and one DeviceMapperService client each, keyed by protocol as edgecore
 * keys them. The rows live in the metabase, so mappers survive an Outpost restart: `reload()` opens
 * their clients again and tests each connection; a mapper that does not answer is marked
 * Unreachable, never fatal.
 */
export class MapperRegistry {
  readonly #o: RegistryOptions;
  readonly #clients = new Map<string, MapperClient>();

  constructor(opts: RegistryOptions) {
    this.#o = opts;
  }

  /** Stores a registration and (re)opens the client to the mapper's socket. */
  register(m: Omit<MapperRecord, 'updatedAt' | 'state'>): MapperRecord {
    const rec = this.#o.mappers.register(m);
    // A fresh channel: the old one may sit in reconnect backoff from before the mapper restarted.
    this.#open(rec, true);
    this.#o.log.info(
      { mapper: rec.name, protocol: rec.protocol, address: rec.address, version: rec.version },
      'mapper registered',
    );
    return rec;
  }

  /** The mapper serving a protocol and its client, if one registered. */
  forProtocol(protocol: string): { mapper: MapperRecord; client: MapperClient } | undefined {
    const mapper = this.#o.mappers.byProtocol(protocol);
    if (!mapper) return undefined;
    const client = this.#clients.get(protocol) ?? this.#open(mapper);
    return { mapper, client };
  }

  list(): MapperRecord[] {
    return this.#o.mappers.list();
  }

  /** Records whether a mapper answered; logs the transitions. */
  mark(mapper: MapperRecord, state: MapperState, reason?: string): void {
    if (!this.#o.mappers.setState(mapper.name, state)) return;
    const log = this.#o.log;
    if (state === 'Unreachable')
      log.warn({ mapper: mapper.name, address: mapper.address, reason }, 'mapper unreachable');
    else log.info({ mapper: mapper.name, address: mapper.address }, 'mapper reachable again');
  }

  /** Tests one mapper's socket; returns whether it answered and records the outcome. */
  async test(mapper: MapperRecord): Promise<boolean> {
    const client = this.forProtocol(mapper.protocol)?.client;
    if (!client) return false;
    try {
      await client.ready(this.#o.testTimeoutMs ?? 2_000);
      this.mark(mapper, 'Running');
      return true;
    } catch (e) {
      this.mark(mapper, 'Unreachable', (e as Error).message);
      return false;
    }
  }

  /** Reopens every stored mapper's client and tests it (at start-up); returns the reachable ones. */
  async reload(): Promise<MapperRecord[]> {
    const mappers = this.list();
    for (const m of mappers) this.#open(m);
    const ok = await Promise.all(mappers.map((m) => this.test(m)));
    this.#o.log.info(
      { mappers: mappers.length, reachable: ok.filter(Boolean).length },
      'mappers reloaded from the metabase',
    );
    return mappers.filter((_, i) => ok[i]);
  }

  /** Closes every client (the registrations stay in the metabase). */
  close(): void {
    for (const c of this.#clients.values()) c.close();
    this.#clients.clear();
  }

  #open(m: MapperRecord, fresh = false): MapperClient {
    const old = this.#clients.get(m.protocol);
    if (!fresh && old && old.name === m.name && old.address === m.address) return old;
    old?.close();
    const client = new MapperClient({
      name: m.name,
      address: m.address,
      ...(this.#o.callTimeoutMs ? { timeoutMs: this.#o.callTimeoutMs } : {}),
    });
    this.#clients.set(m.protocol, client);
    return client;
  }
}
