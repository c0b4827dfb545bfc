// KubeEdge's device twin messages (edge/pkg/devicetwin/dttype) built from Outpost's Device objects:
// `expected` is the spec's desired value, `actual` what the mapper reported. No I/O.
import type { Device, DeviceModel } from '#lib/kube/devices.ts';
import { invalid } from '#lib/kube/status.ts';

export interface TwinValue {
  value: string;
  metadata: { timestamp: number };
}

/** dttype.MsgTwin as edgecore serializes it. */
export interface MsgTwin {
  expected?: TwinValue;
  actual?: TwinValue;
  optional: boolean;
  metadata: { type: string };
}

export interface BaseMessage {
  event_id: string;
  timestamp: number;
}

/** The twins of a device, by property name (the model gives each one's type). */
export function twinsOf(d: Device, model: DeviceModel | undefined, at: number): Record<string, MsgTwin> {
  const types = new Map((model?.spec.properties ?? []).map((p) => [p.name, p.type ?? 'string']));
  const reported = new Map((d.status?.twins ?? []).map((t) => [t.propertyName, t.reported?.value]));
  const names = new Set([...(d.spec.properties ?? []).map((p) => p.name), ...reported.keys()]);
  const out: Record<string, MsgTwin> = {};
  for (const name of names) {
    const desired = d.spec.properties?.find((p) => p.name === name)?.desired?.value;
    const actual = reported.get(name);
    out[name] = {
      ...(desired !== undefined ? { expected: { value: desired, metadata: { timestamp: at } } } : {}),
      ...(actual !== undefined ? { actual: { value: actual, metadata: { timestamp: at } } } : {}),
      optional: false,
      metadata: { type: String(types.get(name) ?? 'string').toLowerCase() },
    };
  }
  return out;
}

const sameValues = (a: MsgTwin | undefined, b: MsgTwin | undefined) =>
  a?.expected?.value === b?.expected?.value && a?.actual?.value === b?.actual?.value;

/** Whether any twin's expected or actual value differs between two twin sets. */
export function twinsChanged(before: Record<string, MsgTwin>, after: Record<string, MsgTwin>): boolean {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const n of names) if (!sameValues(before[n], after[n])) return true;
  return false;
}

/** `.../twin/update/document`: each twin's last and current state. */
export function twinDocument(
  base: BaseMessage,
  before: Record<string, MsgTwin>,
  after: Record<string, MsgTwin>,
): BaseMessage & { twin: Record<string, { last: MsgTwin | null; current: MsgTwin | null }> } {
  const twin: Record<string, { last: MsgTwin | null; current: MsgTwin | null }> = {};
  for (const n of new Set([...Object.keys(before), ...Object.keys(after)]))
    twin[n] = { last: before[n] ?? null, current: after[n] ?? null };
  return { ...base, twin };
}

/** `.../twin/update/delta`, or undefined when every expected value is what the device reports. */
export function twinDelta(
  base: BaseMessage,
  twins: Record<string, MsgTwin>,
): (BaseMessage & { twin: Record<string, MsgTwin>; delta: Record<string, string> }) | undefined {
  const delta: Record<string, string> = {};
  for (const [n, t] of Object.entries(twins))
    if (t.expected && t.expected.value !== t.actual?.value) delta[n] = t.expected.value;
  return Object.keys(delta).length ? { ...base, twin: twins, delta } : undefined;
}

/** `.../state/update`: the device's state as its mapper reported it. */
export const stateMessage = (base: BaseMessage, d: Device) => ({
  ...base,
  device: {
    name: d.metadata.name,
    namespace: d.metadata.namespace,
    state: d.status?.state ?? 'unknown',
    last_online: d.status?.lastOnlineTime ?? '',
  },
});

/**
 * The desired values a `.../twin/update` message asks for: `twin.{property}.expected.value`
 * (actual values are the mapper's to report, over DMI, and are ignored). Throws on a malformed message.
 */
export function parseTwinUpdate(payload: string): { eventId: string; desired: Record<string, string> } {
  let msg: unknown;
  try {
    msg = JSON.parse(payload);
  } catch (e) {
    throw new Error(`the message is not JSON: ${(e as Error).message}`);
  }
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg))
    throw new Error('expected a JSON object');
  const { event_id, twin } = msg as { event_id?: unknown; twin?: unknown };
  if (typeof twin !== 'object' || twin === null || Array.isArray(twin))
    throw new Error('expected {"twin": {"<property>": {"expected": {"value": "..."}}}}');
  const desired: Record<string, string> = {};
  for (const [name, t] of Object.entries(twin as Record<string, unknown>)) {
    const value = (t as { expected?: { value?: unknown } } | null)?.expected?.value;
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
      throw new Error(`twin.${name}.expected.value must be a string`);
    desired[name] = String(value);
  }
  return { eventId: typeof event_id === 'string' ? event_id : '', desired };
}

/** The device with these desired values set (the properties must exist in its spec). */
export function withDesired(d: Device, desired: Record<string, string>): Device {
  const props = d.spec.properties ?? [];
  const missing = Object.keys(desired).filter((n) => !props.some((p) => p.name === n));
  if (missing.length)
    throw invalid(
      'Device',
      d.metadata.name ?? '',
      missing.map((m) => ({
        field: 'spec.properties',
        reason: 'FieldValueNotFound',
        message: `Not found: "${m}": the device has no such property`,
      })),
    );
  d.spec.properties = props.map((p) =>
    desired[p.name] === undefined ? p : { ...p, desired: { ...p.desired, value: desired[p.name]! } },
  );
  return d;
}
