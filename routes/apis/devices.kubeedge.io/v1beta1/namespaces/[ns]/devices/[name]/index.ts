import { deleteDeviceObject } from '#lib/http/device-writes.ts';
import { getOne, patchDevice, putDevice } from '#lib/http/devices.ts';
import { factory } from '#lib/http/factory.ts';
import { param } from '#lib/http/params.ts';

/** One device: spec, and the twins and state its mapper reported. */
export const GET = factory.createHandlers((c) => getOne(c, 'devices', param(c, 'ns'), param(c, 'name')));

/** Replaces a device (keadm ctl edit, kubectl replace); applied through its mapper before it is stored. */
export const PUT = factory.createHandlers((c) => putDevice(c, param(c, 'ns'), param(c, 'name')));

/** Patches a device (kubectl edit, kubectl patch); applied through its mapper before it is stored. */
export const PATCH = factory.createHandlers((c) => patchDevice(c, param(c, 'ns'), param(c, 'name')));

/** Deletes a device made through the API (the mapper is told with RemoveDevice). */
export const DELETE = factory.createHandlers((c) =>
  deleteDeviceObject(c, 'Device', param(c, 'ns'), param(c, 'name')),
);
