// The meta.k8s.io/v1 Table that kubectl asks for (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`)
// and prints without knowing the resource: the server decides the columns and formats every cell.
import { badRequest } from './status.ts';
import type { KubeObject, ObjectMeta } from './types.ts';

/** One column of a Table (metav1.TableColumnDefinition); priority > 0 columns show only with `-o wide`. */
export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** metav1.TableRowCondition; the API server marks finished pods `Completed`. */
export interface TableRowCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
}

/** One row of a Table; `object` is whatever includeObject asked for. */
export interface TableRow {
  cells: unknown[];
  conditions?: TableRowCondition[];
  object?: unknown;
}

/** The wire shape of a meta.k8s.io/v1 Table. */
export interface Table {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

/** What each row carries in `object` (metav1.IncludeObjectPolicy). */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** An object reduced to its metadata, what kubectl needs for `-A`, `--show-labels` and `--sort-by`. */
export interface PartialObjectMetadata {
  kind: 'PartialObjectMetadata';
  apiVersion: 'meta.k8s.io/v1';
  metadata: ObjectMeta;
}

/** What a printer returns for one object: its cells and, optionally, row conditions. */
export interface RowCells {
  cells: unknown[];
  conditions?: TableRowCondition[];
}

export interface ToTableOptions {
  /** Defaults to `Metadata`, as the API server does. */
  includeObject?: IncludeObject | undefined;
  resourceVersion?: string | undefined;
  continue?: string | undefined;
  remainingItemCount?: number | undefined;
  /** Omit the column definitions, as the API server does for every watch event after the first. */
  noHeaders?: boolean | undefined;
}

/** ObjectMeta's description of `name`, used by every resource's Name column. */
export const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';

/** ObjectMeta's description of `creationTimestamp`, used by every resource's Age column. */
export const AGE_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/** A column as upstream declares it; `format` and `priority` default to what Go's zero values serialize as. */
export const column = (
  name: string,
  type: string,
  description: string,
  opts: { format?: string; priority?: number } = {},
): TableColumnDefinition => ({
  name,
  type,
  format: opts.format ?? '',
  description,
  priority: opts.priority ?? 0,
});

/** The Name column that (nearly) every resource's Table starts with. */
export const NAME_COLUMN = column('Name', 'string', NAME_DESCRIPTION, { format: 'name' });

/** The Age column (metadata.creationTimestamp) of every resource's Table. */
export const AGE_COLUMN = column('Age', 'string', AGE_DESCRIPTION);

/** The `object` of a row for the given includeObject policy. */
export function rowObject(obj: KubeObject, includeObject: IncludeObject): unknown {
  switch (includeObject) {
    case 'None':
      return undefined;
    case 'Object':
      return obj;
    case 'Metadata': {
      const partial: PartialObjectMetadata = {
        kind: 'PartialObjectMetadata',
        apiVersion: 'meta.k8s.io/v1',
        metadata: obj.metadata,
      };
      return partial;
    }
  }
}

/** Builds a Table from objects, one row per object, with each row's `object` set per includeObject. */
export function toTable<T extends KubeObject>(
  columns: readonly TableColumnDefinition[],
  objects: readonly T[],
  rowCells: (obj: T) => RowCells | unknown[],
  opts: ToTableOptions = {},
): Table {
  const include = opts.includeObject ?? 'Metadata';
  const metadata: Table['metadata'] = {};
  if (opts.resourceVersion) metadata.resourceVersion = opts.resourceVersion;
  if (opts.continue) metadata.continue = opts.continue;
  if (opts.remainingItemCount !== undefined) metadata.remainingItemCount = opts.remainingItemCount;
  const rows = objects.map((obj): TableRow => {
    const printed = rowCells(obj);
    const row: TableRow = Array.isArray(printed) ? { cells: printed } : { cells: printed.cells };
    if (!Array.isArray(printed) && printed.conditions) row.conditions = printed.conditions;
    const object = rowObject(obj, include);
    if (object !== undefined) row.object = object;
    return row;
  });
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata,
    columnDefinitions: opts.noHeaders ? [] : columns.map((c) => ({ ...c })),
    rows,
  };
}

type Query = URLSearchParams | Record<string, string | string[] | undefined> | string | null | undefined;

/** Reads `includeObject` from a query (a value, URLSearchParams or a record); unset means `Metadata`.
 * Throws 400 BadRequest for anything else, as the API server does. */
export function parseIncludeObject(query: Query): IncludeObject {
  let value: string | string[] | null | undefined;
  if (typeof query === 'string' || query === null || query === undefined) value = query;
  else if (query instanceof URLSearchParams) value = query.get('includeObject');
  else value = query.includeObject;
  if (Array.isArray(value)) value = value[0];
  if (value === undefined || value === null || value === '') return 'Metadata';
  if (value === 'None' || value === 'Metadata' || value === 'Object') return value;
  throw badRequest(`unrecognized includeObject value: ${JSON.stringify(value)}`);
}
