// The namespace Table as kube-apiserver renders it (printNamespace): NAME, STATUS, AGE.
import { translateTimestampSince } from '../duration.ts';
import {
  AGE_COLUMN,
  column,
  NAME_COLUMN,
  type RowCells,
  type Table,
  type ToTableOptions,
  toTable,
} from '../table.ts';
import type { KubeObject } from '../types.ts';

/** A core v1 Namespace as far as the printer cares. */
export interface Namespace extends KubeObject {
  status?: { phase?: string | undefined } | undefined;
}

/** The namespace columns, as upstream declares them. */
export const namespaceColumns = [
  NAME_COLUMN,
  column('Status', 'string', 'The status of the namespace'),
  AGE_COLUMN,
];

/** One namespace's cells: name, phase (`Active`, `Terminating`), age. */
export function printNamespace(ns: Namespace, now: number): RowCells {
  return {
    cells: [
      ns.metadata.name ?? '',
      ns.status?.phase ?? '',
      translateTimestampSince(ns.metadata.creationTimestamp, now),
    ],
  };
}

/** A namespace Table as `GET /api/v1/namespaces` answers it for the Table Accept header. */
export function namespaceTable(
  namespaces: readonly Namespace[],
  now: number,
  opts: ToTableOptions = {},
): Table {
  return toTable(namespaceColumns, namespaces, (ns) => printNamespace(ns, now), opts);
}
