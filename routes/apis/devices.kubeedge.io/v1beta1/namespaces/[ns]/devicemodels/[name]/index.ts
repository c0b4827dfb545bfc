import { deleteDeviceObject, writeModel } from '#lib/http/device-writes.ts';
import { getOne } from '#lib/http/devices.ts';
import { factory } from '#lib/http/factory.ts';
import { param } from '#lib/http/params.ts';

/** One device model. */
export const GET = factory.createHandlers((c) => getOne(c, 'devicemodels', param(c, 'ns'), param(c, 'name')));

/** Replaces a device model; a changed spec reaches its mapper with UpdateDeviceModel. */
export const PUT = factory.createHandlers((c) => writeModel(c, param(c, 'ns'), param(c, 'name'), false));

/** Patches a device model (merge, strategic merge or JSON patch). */
export const PATCH = factory.createHandlers((c) => writeModel(c, param(c, 'ns'), param(c, 'name'), true));

/** Deletes a device model made through the API. */
export const DELETE = factory.createHandlers((c) =>
  deleteDeviceObject(c, 'DeviceModel', param(c, 'ns'), param(c, 'name')),
);
