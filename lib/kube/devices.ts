// The devices.kubeedge.io/v1beta1 objects Outpost stores and serves (kubeedge/api apis/devices/v1beta1).
import type { KubeObject } from './types.ts';

export const DEVICE_GROUP = 'devices.kubeedge.io';
export const DEVICE_VERSION = 'v1beta1';
export const DEVICE_API_VERSION = `${DEVICE_GROUP}/${DEVICE_VERSION}`;

export interface TwinProperty {
  value: string;
  metadata?: Record<string, string>;
}

/** Free-form configuration (CustomizedValue): any JSON object. */
export type ConfigData = Record<string, unknown>;

export interface DeviceProperty {
  name: string;
  desired?: TwinProperty;
  visitors?: { protocolName?: string; configData?: ConfigData };
  /** Go time.Duration in nanoseconds, as the mapper framework reads it. */
  reportCycle?: number;
  collectCycle?: number;
  reportToCloud?: boolean;
  pushMethod?: Record<string, unknown>;
}

export interface DeviceSpec {
  deviceModelRef?: { name?: string };
  nodeName?: string;
  properties?: DeviceProperty[];
  protocol: { protocolName?: string; configData?: ConfigData };
}

export interface Twin {
  propertyName: string;
  reported?: TwinProperty;
  observedDesired?: TwinProperty;
}

export interface DeviceStatus {
  twins?: Twin[];
  state?: string;
  lastOnlineTime?: string;
}

export interface Device extends KubeObject {
  spec: DeviceSpec;
  status?: DeviceStatus;
}

export type PropertyType = 'INT' | 'FLOAT' | 'DOUBLE' | 'STRING' | 'BOOLEAN' | 'BYTES' | 'STREAM';

export interface ModelProperty {
  name: string;
  description?: string;
  type?: PropertyType | string;
  accessMode?: 'ReadWrite' | 'ReadOnly' | string;
  minimum?: string;
  maximum?: string;
  unit?: string;
}

export interface DeviceModel extends KubeObject {
  spec: { protocol?: string; properties?: ModelProperty[] };
}
