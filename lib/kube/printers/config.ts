// ConfigMap and Secret Tables as kube-apiserver renders them (printConfigMap: NAME, DATA, AGE;
// printSecret: NAME, TYPE, DATA, AGE).
import { translateTimestampSince } from '../duration.ts';
import {
  AGE_COLUMN,
  column,
  NAME_COLUMN,
  type Table,
  type TableColumnDefinition,
  type ToTableOptions,
  toTable,
} from '../table.ts';
import type { KubeObject } from '../types.ts';

const count = (...maps: unknown[]) =>
  maps.reduce<number>((n, m) => n + (m && typeof m === 'object' ? Object.keys(m).length : 0), 0);

/** A Table of NAME, the given columns, AGE; `cells` prints an object's middle cells. */
function nameAgeTable(middle: TableColumnDefinition[], cells: (o: KubeObject) => unknown[]) {
  const columns = [NAME_COLUMN, ...middle, AGE_COLUMN];
  return (items: readonly KubeObject[], now: number, opts: ToTableOptions = {}): Table =>
    toTable(
      columns,
      items,
      (o) => ({
        cells: [
          o.metadata.name ?? '',
          ...cells(o),
          translateTimestampSince(o.metadata.creationTimestamp, now),
        ],
      }),
      opts,
    );
}

/** A ConfigMap Table. */
export const configMapTable = nameAgeTable(
  [column('Data', 'string', 'Data contains the configuration data.')],
  (o) => [count(o.data, o.binaryData)],
);

/** A Secret Table; the data itself is never in it. */
export const secretTable = nameAgeTable(
  [
    column('Type', 'string', 'The type of the secret'),
    column('Data', 'string', 'The number of entries in the secret'),
  ],
  (o) => [(o.type as string | undefined) ?? 'Opaque', count(o.data)],
);
