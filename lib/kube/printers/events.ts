// The core v1 Event Table as kube-apiserver renders it (printEvent): `kubectl get events` shows
// LAST SEEN, TYPE, REASON, OBJECT, MESSAGE; `-o wide` adds subobject, source, first seen, count, name.
import { parseTimestamp, translateTimestampSince } from '../duration.ts';
import {
  column,
  NAME_DESCRIPTION,
  type RowCells,
  type Table,
  type ToTableOptions,
  toTable,
} from '../table.ts';
import type { KubeObject } from '../types.ts';

/** The fields of a core v1 Event the printer reads; loose so any stored Event shape fits. */
export interface CoreEvent extends KubeObject {
  involvedObject?:
    | { kind?: string | undefined; name?: string | undefined; fieldPath?: string | undefined }
    | undefined;
  reason?: string | undefined;
  message?: string | undefined;
  type?: string | undefined;
  source?: { component?: string | undefined; host?: string | undefined } | undefined;
  firstTimestamp?: string | null | undefined;
  lastTimestamp?: string | null | undefined;
  /** MicroTime of events.k8s.io-style events that carry no first/lastTimestamp. */
  eventTime?: string | null | undefined;
  series?: { count?: number | undefined; lastObservedTime?: string | undefined } | null | undefined;
  count?: number | undefined;
  reportingComponent?: string | undefined;
  reportingInstance?: string | undefined;
}

/** The event columns in upstream's order; Subobject, Source, First Seen, Count and Name are wide-only. */
export const eventColumns = [
  column('Last Seen', 'string', 'The time at which the most recent occurrence of this event was recorded.'),
  column('Type', 'string', 'Type of this event (Normal, Warning), new types could be added in the future'),
  column(
    'Reason',
    'string',
    "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
  ),
  column('Object', 'string', 'The object that this event is about.'),
  column(
    'Subobject',
    'string',
    'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',
    { priority: 1 },
  ),
  column(
    'Source',
    'string',
    'The component reporting this event. Should be a short machine understandable string.',
    {
      priority: 1,
    },
  ),
  column('Message', 'string', 'A human-readable description of the status of this operation.'),
  column(
    'First Seen',
    'string',
    'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)',
    { priority: 1 },
  ),
  column('Count', 'string', 'The number of times this event has occurred.', { priority: 1 }),
  column('Name', 'string', NAME_DESCRIPTION, { format: 'name', priority: 1 }),
];

/** `kubelet, node-1`: the component, and the host when there is one (reporting* as fallbacks). */
export function formatEventSource(event: CoreEvent): string {
  const component = event.source?.component || event.reportingComponent || '';
  const instance = event.source?.host || event.reportingInstance || '';
  return instance ? `${component}, ${instance}` : component;
}

/** One event's ten cells, as upstream printEvent renders them for the API server (always wide). */
export function printEvent(event: CoreEvent, now: number): RowCells {
  let first = translateTimestampSince(event.firstTimestamp, now);
  if (parseTimestamp(event.firstTimestamp) === undefined)
    first = translateTimestampSince(event.eventTime, now);
  let last = translateTimestampSince(event.lastTimestamp, now);
  if (parseTimestamp(event.lastTimestamp) === undefined) last = first;
  let count = event.count ?? 0;
  if (event.series) {
    last = translateTimestampSince(event.series.lastObservedTime, now);
    count = event.series.count ?? 0;
  } else if (count === 0) {
    count = 1; // singleton events of the new API carry no count
  }
  const kind = (event.involvedObject?.kind ?? '').toLowerCase();
  const name = event.involvedObject?.name;
  return {
    cells: [
      last,
      event.type ?? '',
      event.reason ?? '',
      name ? `${kind}/${name}` : kind,
      event.involvedObject?.fieldPath ?? '',
      formatEventSource(event),
      (event.message ?? '').trim(),
      first,
      count,
      event.metadata.name ?? '',
    ],
  };
}

/** An event Table as `GET .../events` answers it for the Table Accept header. */
export function eventTable(events: readonly CoreEvent[], now: number, opts: ToTableOptions = {}): Table {
  return toTable(eventColumns, events, (e) => printEvent(e, now), opts);
}
