// ConfigMap and Secret Tables as kube-apiserver renders them (printConfigMap: NAME, DATA, AGE;
// printSecret: NAME, TYPE, DATA, AGE).
import { translateTimestampSince } from '../duration.ts';
import {
  AGE_DESCRIPTION,
  column,
  NAME_DESCRIPTION,
  type Table,
  type ToTableOptions,
  toTable,
} from '../table.ts';
import type { KubeObject } from '../types.ts';

const count = (...maps: unknown[]) =>
  maps.reduce<number>((n, m) => n + (m && typeof m === 'object' ? Object.keys(m).length : 0), 0);

/** A ConfigMap Table. */
export function configMapTable(items: readonly KubeObject[], now: number, opts: ToTableOptions = {}): Table {
  const columns = [
    column('Name', 'string', NAME_DESCRIPTION, { format: 'name' }),
    column('Data', 'string', 'Data contains the configuration data.'),
    column('Age', 'string', AGE_DESCRIPTION),
  ];
  return toTable(
    columns,
    items,
    (o) => ({
      cells: [
        o.metadata.name ?? '',
        count(o.data, o.binaryData),
        translateTimestampSince(o.metadata.creationTimestamp, now),
      ],
    }),
    opts,
  );
}

/** A Secret Table; the data itself is never in it. */
export function secretTable(items: readonly KubeObject[], now: number, opts: ToTableOptions = {}): Table {
  const columns = [
    column('Name', 'string', NAME_DESCRIPTION, { format: 'name' }),
    column('Type', 'string', 'The type of the secret'),
    column('Data', 'string', 'The number of entries in the secret'),
    column('Age', 'string', AGE_DESCRIPTION),
  ];
  return toTable(
    columns,
    items,
    (o) => ({
      cells: [
        o.metadata.name ?? '',
        (o.type as string | undefined) ?? 'Opaque',
        count(o.data),
        translateTimestampSince(o.metadata.creationTimestamp, now),
      ],
    }),
    opts,
  );
}
