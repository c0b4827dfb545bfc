import { createDeviceObject } from '#lib/http/device-writes.ts';
import { deviceModelsResource } from '#lib/http/devices.ts';
import { factory, query } from '#lib/http/factory.ts';
import { listOrWatch, listQuery } from '#lib/http/list.ts';
import { param } from '#lib/http/params.ts';

/** List or watch the device models of one namespace. */
export const GET = factory.createHandlers(query(listQuery), (c) =>
  listOrWatch(c, deviceModelsResource(c.var.store), param(c, 'ns'), c.req.valid('query')),
);

/** Creates a device model. */
export const POST = factory.createHandlers((c) => createDeviceObject(c, 'DeviceModel', param(c, 'ns')));
