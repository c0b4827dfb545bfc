// Device and DeviceModel manifests (devices.kubeedge.io/v1beta1) beside the pods: checked, applied
// with their live edits kept (see CrdStore.apply), removed when their manifest is gone. The DMI
// reconciler pushes the changes to the mappers.

import { validateDevice, validateModel } from '#lib/dmi/validate.ts';
import { DEVICE_API_VERSION, type Device, type DeviceModel } from '#lib/kube/devices.ts';
import type { KubeObject } from '#lib/kube/types.ts';
import type { Store } from '#lib/store/index.ts';

export const DEVICE_KINDS = new Set(['Device', 'DeviceModel']);

/** Why a device manifest cannot be applied, or undefined. */
export function deviceManifestProblem(obj: KubeObject): string | undefined {
  if (obj.apiVersion !== DEVICE_API_VERSION)
    return `${obj.kind} "${obj.metadata.name ?? ''}": apiVersion must be ${DEVICE_API_VERSION}`;
  const causes = obj.kind === 'Device' ? validateDevice(obj as Device) : validateModel(obj as DeviceModel);
  if (!causes.length) return undefined;
  return `${obj.kind} "${obj.metadata.name ?? ''}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join('; ')}`;
}

/** Stores a device or model from a manifest file. */
export function applyDeviceManifest(
  store: Store,
  obj: KubeObject,
  file: string,
): 'ADDED' | 'MODIFIED' | 'UNCHANGED' {
  return obj.kind === 'Device'
    ? store.devices.apply(obj as Device, 'manifest', file)
    : store.deviceModels.apply(obj as DeviceModel, 'manifest', file);
}

/** Removes the manifest devices and models `stale` says are gone; returns how many. */
export function removeStaleDevices(
  store: Store,
  stale: (origin: string | null, key: string) => boolean,
): number {
  let removed = 0;
  for (const [kind, s] of [
    ['Device', store.devices],
    ['DeviceModel', store.deviceModels],
  ] as const) {
    for (const r of s.records({ source: 'manifest' })) {
      const { namespace = 'default', name = '' } = r.object.metadata;
      if (stale(r.origin, `${kind}/${namespace}/${name}`)) {
        s.remove(namespace, name);
        removed++;
      }
    }
  }
  return removed;
}
