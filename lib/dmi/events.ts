import type { EventStore } from '#lib/store/events.ts';
import { DEVICE_API_VERSION, type Device, type Twin } from './types.ts';

/** States a mapper reports for a device that is not working (mapper framework's status values). */
const BAD_STATES = new Set(['offline', 'unhealthy', 'disconnected', 'unknown', 'error']);

/** Records an event about a device, attributed to the DMI module. */
export function deviceEvent(
  events: EventStore,
  d: Pick<Device, 'metadata'>,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
): void {
  events.record(
    {
      kind: 'Device',
      apiVersion: DEVICE_API_VERSION,
      namespace: d.metadata.namespace ?? 'default',
      name: d.metadata.name ?? '',
      uid: d.metadata.uid,
    },
    type,
    reason,
    message,
    'outpost-dmi',
  );
}

/** The event for a state change a mapper reported. */
export function stateEvent(events: EventStore, d: Device, before: string, state: string): void {
  const type = BAD_STATES.has(state.toLowerCase()) ? 'Warning' : 'Normal';
  const msg = before ? `device state changed from "${before}" to "${state}"` : `device state is "${state}"`;
  deviceEvent(events, d, type, 'StateChanged', msg);
}

/** Events for desired values a mapper now reports as observed (the edit reached the device). */
export function observedEvents(
  events: EventStore,
  d: Device,
  before: readonly Twin[],
  after: readonly Twin[],
) {
  for (const t of after) {
    const value = t.observedDesired?.value;
    if (!value) continue;
    const prev = before.find((b) => b.propertyName === t.propertyName)?.observedDesired?.value;
    if (prev === value) continue;
    deviceEvent(events, d, 'Normal', 'DesiredObserved', `mapper applied desired ${t.propertyName}=${value}`);
  }
}

/** `target-temperature: "22" → "25"` for each property whose desired value changed. */
export function desiredChanges(before: Device, after: Device): string[] {
  const old = new Map((before.spec.properties ?? []).map((p) => [p.name, p.desired?.value ?? '']));
  const out: string[] = [];
  for (const p of after.spec.properties ?? []) {
    const v = p.desired?.value ?? '';
    const was = old.get(p.name) ?? '';
    if (v !== was) out.push(`${p.name}: ${JSON.stringify(was)} → ${JSON.stringify(v)}`);
  }
  return out;
}
