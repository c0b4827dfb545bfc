// Device fixtures for the DMI tests: manifests for the reference mapper, the mapper itself in process
// on a real unix socket, and small HTTP helpers.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { VirtualMapper } from '#lib/dmi/virtual-mapper.ts';
import type { Device } from '#lib/kube/devices.ts';
import type { Status } from '#lib/kube/status.ts';
import { silentLogger } from '#lib/log.ts';
import { adminHeaders } from './agent.ts';

export const MODEL = `apiVersion: devices.kubeedge.io/v1beta1
kind: DeviceModel
metadata:
  name: thermometer-model
spec:
  protocol: virtual
  properties:
    - name: temperature
      type: FLOAT
      accessMode: ReadOnly
      unit: °C
    - name: target-temperature
      type: FLOAT
      accessMode: ReadWrite
      minimum: "5"
      maximum: "35"
    - name: switch
      type: BOOLEAN
      accessMode: ReadWrite
`;

/** A thermometer for `protocol`, reporting every 200 ms. */
export const device = (
  name: string,
  protocol: string,
  labels = 'room: lab',
) => `apiVersion: devices.kubeedge.io/v1beta1
kind: Device
metadata:
  name: ${name}
  labels: {${labels}}
spec:
  deviceModelRef:
    name: thermometer-model
  protocol:
    protocolName: ${protocol}
    configData:
      ambient: 18
  properties:
    - name: temperature
      reportCycle: 200000000
    - name: target-temperature
      desired:
        value: "22"
      reportCycle: 200000000
    - name: switch
      desired:
        value: "true"
      reportCycle: 200000000
`;

/** Writes the model and the given device documents into `dir/devices.yaml`. */
export function writeDevices(dir: string, devices: string[]): void {
  writeFileSync(join(dir, 'devices.yaml'), [MODEL, ...devices].join('---\n'));
}

/** Starts the reference mapper on `socket`, registered with the Outpost whose DMI socket is given. */
export async function startMapper(
  socket: string,
  dmiSocket: string,
  opts: { protocol?: string; withData?: boolean; name?: string } = {},
): Promise<VirtualMapper> {
  const vm = new VirtualMapper({
    socket,
    dmiSocket,
    log: silentLogger,
    reportCycleMs: 200,
    ...(opts.protocol ? { protocol: opts.protocol } : {}),
    ...(opts.name ? { name: opts.name } : {}),
    ...(opts.withData === undefined ? {} : { withData: opts.withData }),
  });
  await vm.start();
  return vm;
}

/** A request to Outpost's API (as its admin, when a test started it); answers status and parsed JSON. */
export async function api<T = unknown>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: T }> {
  const res = await fetch(new URL(path, base), {
    method,
    headers: { ...adminHeaders(base), ...(body === undefined ? {} : { 'content-type': contentType }) },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as T };
}

export const DEVICES = '/apis/devices.kubeedge.io/v1beta1/namespaces/default/devices';

/** The device as served. */
export const getDevice = async (base: string, name: string) =>
  (await api<Device>(base, 'GET', `${DEVICES}/${name}`)).body;

/** A twin's reported value, or undefined. */
export const reported = (d: Device, property: string) =>
  d.status?.twins?.find((t) => t.propertyName === property)?.reported?.value;

/** A property's desired value. */
export const desired = (d: Device, property: string) =>
  d.spec.properties?.find((p) => p.name === property)?.desired?.value;

export type { Status };
