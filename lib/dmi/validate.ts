// What the API server (the CRD schema, lib/kube/device-schema.ts) and edgecore
// (dtcommon.ValidateValue) check on devices and models, plus the checks against the device's model
// that only the node can make: a desired value must fit the property's type, range and access mode.
import { DEVICE_MODEL_SCHEMA, DEVICE_SCHEMA } from '#lib/kube/device-schema.ts';
import { validateSchema } from '#lib/kube/openapi-validate.ts';
import { type StatusCause, StatusError } from '#lib/kube/status.ts';
import { checkDnsLabel, checkDnsSubdomain } from '#lib/kube/validate.ts';
import {
  DEVICE_API_VERSION,
  DEVICE_GROUP,
  type Device,
  type DeviceModel,
  type ModelProperty,
} from './types.ts';

const required = (field: string): StatusCause => ({
  field,
  reason: 'FieldValueRequired',
  message: 'Required value',
});
const bad = (field: string, value: unknown, why: string): StatusCause => ({
  field,
  reason: 'FieldValueInvalid',
  message: `Invalid value: ${JSON.stringify(value)}: ${why}`,
});

/** Why `value` is not a valid value of a property of this type and range, or undefined when it is. */
export function twinValueProblem(value: string, p: ModelProperty): string | undefined {
  const type = (p.type ?? 'STRING').toUpperCase();
  let n: number | undefined;
  if (type === 'INT') {
    if (!/^[-+]?\d+$/.test(value)) return 'must be an integer (property type INT)';
    n = Number(value);
  } else if (type === 'FLOAT' || type === 'DOUBLE') {
    n = value.trim() === '' ? Number.NaN : Number(value);
    if (!Number.isFinite(n)) return `must be a number (property type ${type})`;
  } else if (type === 'BOOLEAN') {
    if (value !== 'true' && value !== 'false') return 'must be true or false (property type BOOLEAN)';
  }
  if (n !== undefined) {
    const min = p.minimum === undefined || p.minimum === '' ? undefined : Number(p.minimum);
    const max = p.maximum === undefined || p.maximum === '' ? undefined : Number(p.maximum);
    if (min !== undefined && Number.isFinite(min) && n < min) return `must be at least ${p.minimum}`;
    if (max !== undefined && Number.isFinite(max) && n > max) return `must be at most ${p.maximum}`;
  }
  return undefined;
}

function checkMeta(obj: { apiVersion?: string; kind?: string; metadata?: unknown }, kind: string) {
  const causes: StatusCause[] = [];
  if (obj.apiVersion !== undefined && obj.apiVersion !== DEVICE_API_VERSION)
    causes.push(bad('apiVersion', obj.apiVersion, `must be ${DEVICE_API_VERSION}`));
  if (obj.kind !== undefined && obj.kind !== kind) causes.push(bad('kind', obj.kind, `must be ${kind}`));
  const meta = (obj.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  causes.push(...checkDnsSubdomain(meta.name, 'metadata.name'));
  causes.push(...checkDnsLabel(meta.namespace || 'default', 'metadata.namespace'));
  return causes;
}

const cycle = (v: unknown) => v === undefined || (v as number) >= 0;

/** Problems with a Device, checked against its model when the model is known. */
export function validateDevice(d: Device, model?: DeviceModel): StatusCause[] {
  const causes = checkMeta(d, 'Device');
  const schema = validateSchema(DEVICE_SCHEMA, d);
  // A value of the wrong shape: the checks below would read it as something it is not.
  if (schema.length) return [...causes, ...schema];
  const spec = d.spec as Device['spec'] | undefined;
  if (!spec) return [...causes, required('spec')];
  if (!spec.protocol?.protocolName) causes.push(required('spec.protocol.protocolName'));
  if (!spec.deviceModelRef?.name) causes.push(required('spec.deviceModelRef.name'));
  const byName = new Map((model?.spec.properties ?? []).map((p) => [p.name, p]));
  const seen = new Set<string>();
  (spec.properties ?? []).forEach((p, i) => {
    const field = `spec.properties[${i}]`;
    if (seen.has(p.name))
      causes.push({
        field: `${field}.name`,
        reason: 'FieldValueDuplicate',
        message: `Duplicate value: "${p.name}"`,
      });
    seen.add(p.name);
    if (!cycle(p.reportCycle))
      causes.push(bad(`${field}.reportCycle`, p.reportCycle, 'must be a non-negative integer'));
    if (!cycle(p.collectCycle))
      causes.push(bad(`${field}.collectCycle`, p.collectCycle, 'must be a non-negative integer'));
    const desired = p.desired?.value;
    if (!model) return;
    const mp = byName.get(p.name);
    if (!mp) {
      causes.push({
        field: `${field}.name`,
        reason: 'FieldValueNotFound',
        message: `Not found: "${p.name}": device model "${model.metadata.name}" has no such property`,
      });
      return;
    }
    if (!desired) return;
    if (mp.accessMode === 'ReadOnly') {
      causes.push(bad(`${field}.desired.value`, desired, `property "${p.name}" is ReadOnly`));
      return;
    }
    const problem = twinValueProblem(desired, mp);
    if (problem) causes.push(bad(`${field}.desired.value`, desired, problem));
  });
  return causes;
}

/** Problems with a DeviceModel. */
export function validateModel(m: DeviceModel): StatusCause[] {
  const causes = checkMeta(m, 'DeviceModel');
  const schema = validateSchema(DEVICE_MODEL_SCHEMA, m);
  if (schema.length) return [...causes, ...schema];
  const spec = m.spec as DeviceModel['spec'] | undefined;
  if (!spec) return [...causes, required('spec')];
  const seen = new Set<string>();
  (spec.properties ?? []).forEach((p, i) => {
    const field = `spec.properties[${i}]`;
    if (seen.has(p.name))
      causes.push({
        field: `${field}.name`,
        reason: 'FieldValueDuplicate',
        message: `Duplicate value: "${p.name}"`,
      });
    seen.add(p.name);
  });
  return causes;
}

/** 422 as the API server words it for a custom resource: `Device.devices.kubeedge.io "x" is invalid: ...`. */
export function invalidObject(
  kind: 'Device' | 'DeviceModel',
  name: string,
  causes: StatusCause[],
): StatusError {
  const list = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join(', ');
  return new StatusError(422, 'Invalid', `${kind}.${DEVICE_GROUP} "${name}" is invalid: ${list}`, {
    name,
    group: DEVICE_GROUP,
    kind,
    causes,
  });
}
