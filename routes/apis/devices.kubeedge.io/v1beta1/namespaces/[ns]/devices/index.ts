import { createDeviceObject } from '#lib/http/device-writes.ts';
import { devicesResource } from '#lib/http/devices.ts';
import { factory, query } from '#lib/http/factory.ts';
import { listOrWatch, listQuery } from '#lib/http/list.ts';
import { param } from '#lib/http/params.ts';

/** List or watch the devices of one namespace. */
export const GET = factory.createHandlers(query(listQuery), (c) =>
  listOrWatch(c, devicesResource(c.var.store), param(c, 'ns'), c.req.valid('query')),
);

/** Creates a device (kubectl create/apply); its mapper gets it through the reconciler. */
export const POST = factory.createHandlers((c) => createDeviceObject(c, 'Device', param(c, 'ns')));
