export type {
  ConfigData,
  Device,
  DeviceModel,
  DeviceProperty,
  DeviceSpec,
  DeviceStatus,
  ModelProperty,
  PropertyType,
  Twin,
  TwinProperty,
} from '#lib/kube/devices.ts';
export { DEVICE_API_VERSION, DEVICE_GROUP, DEVICE_VERSION } from '#lib/kube/devices.ts';

// ---- DMI wire shapes (the objects lib/grpc/services.ts decodes) ----

/** google.protobuf.Any as lib/grpc/services.ts hands it over. */
export interface PbAny {
  type_url: string;
  value: Buffer | Uint8Array;
}

export interface PbCustomizedValue {
  data: Record<string, PbAny>;
}

export interface PbTwinProperty {
  value: string;
  metadata: Record<string, string>;
}

export interface PbDeviceProperty {
  name: string;
  desired: PbTwinProperty | null;
  visitors: { protocolName: string; configData: PbCustomizedValue | null } | null;
  reportCycle: string;
  collectCycle: string;
  reportToCloud: boolean;
  pushMethod: Record<string, unknown> | null;
}

export interface PbTwin {
  propertyName: string;
  observedDesired: PbTwinProperty | null;
  reported: PbTwinProperty | null;
}

export interface PbDeviceStatus {
  twins: PbTwin[];
  reportToCloud: boolean;
  reportCycle: string;
}

export interface PbDevice {
  name: string;
  namespace: string;
  spec: {
    deviceModelReference: string;
    protocol: { protocolName: string; configData: PbCustomizedValue | null } | null;
    properties: PbDeviceProperty[];
  } | null;
  status: PbDeviceStatus | null;
}

export interface PbModelProperty {
  name: string;
  description: string;
  type: string;
  accessMode: string;
  minimum: string;
  maximum: string;
  unit: string;
}

export interface PbDeviceModel {
  name: string;
  namespace: string;
  spec: { properties: PbModelProperty[] } | null;
}

export interface PbMapperInfo {
  name: string;
  version: string;
  apiVersion: string;
  protocol: string;
  address: Buffer | Uint8Array;
  state: string;
}
