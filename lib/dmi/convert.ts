// Device and DeviceModel objects to and from their DMI messages, field for field as edgecore's
// dtcommon.ConvertDevice / ConvertDeviceModel do (the CRD JSON decoded into the proto structs).
import { fromCustomized, toCustomized } from './any.ts';
import type {
  Device,
  DeviceModel,
  DeviceProperty,
  PbDevice,
  PbDeviceModel,
  PbTwin,
  PbTwinProperty,
  Twin,
  TwinProperty,
} from './types.ts';

const twinProperty = (p: TwinProperty | undefined): PbTwinProperty | null =>
  p ? { value: p.value ?? '', metadata: { ...(p.metadata ?? {}) } } : null;

function pushMethod(p: DeviceProperty['pushMethod']): Record<string, unknown> | null {
  if (!p) return null;
  const http = p.http as Record<string, unknown> | undefined;
  const mqtt = p.mqtt as Record<string, unknown> | undefined;
  return {
    // The CRD spells hostName and requestPath; Go's JSON decoding into the proto struct ignores case.
    ...(http
      ? {
          http: {
            hostname: http.hostName ?? http.hostname ?? '',
            port: String(http.port ?? 0),
            requestpath: http.requestPath ?? http.requestpath ?? '',
            timeout: String(http.timeout ?? 0),
          },
        }
      : {}),
    ...(mqtt ? { mqtt: { ...mqtt } } : {}),
  };
}

/** The DMI Device a mapper is sent for a stored Device (spec and the status twins). */
export function deviceToPb(d: Device): PbDevice {
  return {
    name: d.metadata.name ?? '',
    namespace: d.metadata.namespace ?? 'default',
    spec: {
      deviceModelReference: d.spec.deviceModelRef?.name ?? '',
      protocol: {
        protocolName: d.spec.protocol?.protocolName ?? '',
        configData: toCustomized(d.spec.protocol?.configData),
      },
      properties: (d.spec.properties ?? []).map((p) => ({
        name: p.name,
        desired: twinProperty(p.desired),
        visitors: p.visitors
          ? { protocolName: p.visitors.protocolName ?? '', configData: toCustomized(p.visitors.configData) }
          : null,
        reportCycle: String(p.reportCycle ?? 0),
        collectCycle: String(p.collectCycle ?? 0),
        reportToCloud: p.reportToCloud ?? false,
        pushMethod: pushMethod(p.pushMethod),
      })),
    },
    status: {
      twins: (d.status?.twins ?? []).map(
        (t): PbTwin => ({
          propertyName: t.propertyName,
          observedDesired: twinProperty(t.observedDesired),
          reported: twinProperty(t.reported),
        }),
      ),
      reportToCloud: false,
      reportCycle: '0',
    },
  };
}

/** The DMI DeviceModel for a stored DeviceModel (the protocol is not part of the message). */
export function modelToPb(m: DeviceModel): PbDeviceModel {
  return {
    name: m.metadata.name ?? '',
    namespace: m.metadata.namespace ?? 'default',
    spec: {
      properties: (m.spec.properties ?? []).map((p) => ({
        name: p.name,
        description: p.description ?? '',
        type: p.type ?? '',
        accessMode: p.accessMode ?? '',
        minimum: p.minimum ?? '',
        maximum: p.maximum ?? '',
        unit: p.unit ?? '',
      })),
    },
  };
}

const fromTwinProperty = (p: PbTwinProperty | null | undefined): TwinProperty | undefined => {
  if (!p) return undefined;
  const out: TwinProperty = { value: p.value };
  if (p.metadata && Object.keys(p.metadata).length) out.metadata = { ...p.metadata };
  return out;
};

/** Twins as a mapper reports them, in the CRD's shape. */
export function twinsFromPb(twins: readonly PbTwin[]): Twin[] {
  return twins.map((t) => {
    const out: Twin = { propertyName: t.propertyName };
    const reported = fromTwinProperty(t.reported);
    const observed = fromTwinProperty(t.observedDesired);
    if (reported) out.reported = reported;
    if (observed) out.observedDesired = observed;
    return out;
  });
}

/** A device as a mapper holds it, back in the CRD's shape (the reference mapper works on these). */
export function deviceFromPb(p: PbDevice): Device {
  const spec = p.spec;
  const device: Device = {
    apiVersion: 'devices.kubeedge.io/v1beta1',
    kind: 'Device',
    metadata: { name: p.name, namespace: p.namespace || 'default' },
    spec: {
      deviceModelRef: { name: spec?.deviceModelReference ?? '' },
      protocol: {
        protocolName: spec?.protocol?.protocolName ?? '',
        configData: fromCustomized(spec?.protocol?.configData),
      },
      properties: (spec?.properties ?? []).map((prop) => {
        const out: DeviceProperty = { name: prop.name };
        const desired = fromTwinProperty(prop.desired);
        if (desired) out.desired = desired;
        if (prop.visitors)
          out.visitors = {
            protocolName: prop.visitors.protocolName,
            configData: fromCustomized(prop.visitors.configData),
          };
        if (Number(prop.reportCycle)) out.reportCycle = Number(prop.reportCycle);
        if (Number(prop.collectCycle)) out.collectCycle = Number(prop.collectCycle);
        if (prop.reportToCloud) out.reportToCloud = true;
        return out;
      }),
    },
  };
  const twins = twinsFromPb(p.status?.twins ?? []);
  if (twins.length) device.status = { twins };
  return device;
}

/** A model as a mapper holds it, in the CRD's shape. */
export function modelFromPb(p: PbDeviceModel): DeviceModel {
  return {
    apiVersion: 'devices.kubeedge.io/v1beta1',
    kind: 'DeviceModel',
    metadata: { name: p.name, namespace: p.namespace || 'default' },
    spec: {
      properties: (p.spec?.properties ?? []).map((m) => ({
        name: m.name,
        type: m.type,
        accessMode: m.accessMode,
        ...(m.description ? { description: m.description } : {}),
        ...(m.minimum ? { minimum: m.minimum } : {}),
        ...(m.maximum ? { maximum: m.maximum } : {}),
        ...(m.unit ? { unit: m.unit } : {}),
      })),
    },
  };
}
