import type { Metabase } from '#db/open.ts';
import type { Sqlite } from '#db/sqlite.ts';

/** What the node knows of a mapper: its registration and whether its socket answered last time. */
export interface MapperRecord {
  name: string;
  protocol: string;
  /** The mapper's DeviceMapperService socket. */
  address: string;
  version: string | null;
  apiVersion: string | null;
  /** `Running` (registered or answered the last connection test) or `Unreachable`. */
  state: MapperState;
  updatedAt: string;
}

export type MapperState = 'Running' | 'Unreachable';

interface Row {
  name: string;
  protocol: string;
  address: string;
  version: string | null;
  api_version: string | null;
  state: MapperState;
  updated_at: string;
}

const toRecord = (r: Row): MapperRecord => ({
  name: r.name,
  protocol: r.protocol,
  address: r.address,
  version: r.version,
  apiVersion: r.api_version,
  state: r.state,
  updatedAt: r.updated_at,
});

/** Registered device mappers, one per protocol as edgecore keeps them. */
export class MapperStore {
  readonly #sqlite: Sqlite;
  readonly #now: () => number;

  constructor(mb: Metabase, now: () => number = Date.now) {
    this.#sqlite = mb.sqlite;
    this.#now = now;
  }

  list(): MapperRecord[] {
    return this.#sqlite.prepare<[], Row>('SELECT * FROM mappers ORDER BY protocol, name').all().map(toRecord);
  }

  byProtocol(protocol: string): MapperRecord | undefined {
    const row = this.#sqlite.prepare<[string], Row>('SELECT * FROM mappers WHERE protocol = ?').get(protocol);
    return row && toRecord(row);
  }

  /** Stores a registration; a mapper registering a protocol replaces whichever mapper had it. */
  register(m: Omit<MapperRecord, 'updatedAt' | 'state'>): MapperRecord {
    const rec: MapperRecord = { ...m, state: 'Running', updatedAt: new Date(this.#now()).toISOString() };
    this.#sqlite.transaction(() => {
      this.#sqlite.prepare('DELETE FROM mappers WHERE protocol = ? AND name != ?').run(m.protocol, m.name);
      this.#sqlite
        .prepare(
          `INSERT INTO mappers (name, protocol, address, version, api_version, state, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET protocol = excluded.protocol,
           address = excluded.address, version = excluded.version, api_version = excluded.api_version,
           state = excluded.state, updated_at = excluded.updated_at`,
        )
        .run(rec.name, rec.protocol, rec.address, rec.version, rec.apiVersion, rec.state, rec.updatedAt);
    })();
    return rec;
  }

  /** Records the outcome of a connection test or call; returns whether the state changed. */
  setState(name: string, state: MapperState): boolean {
    const res = this.#sqlite
      .prepare('UPDATE mappers SET state = ?, updated_at = ? WHERE name = ? AND state != ?')
      .run(state, new Date(this.#now()).toISOString(), name, state);
    return res.changes > 0;
  }
}
