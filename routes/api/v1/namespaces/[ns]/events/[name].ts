import { factory } from '#lib/http/factory.ts';
import { wantsTable } from '#lib/http/negotiate.ts';
import { param } from '#lib/http/params.ts';
import { eventTable } from '#lib/kube/printers/events.ts';
import { notFound } from '#lib/kube/status.ts';
import { parseIncludeObject } from '#lib/kube/table.ts';

/** One event (`kubectl get event NAME`; discovery lists `get`). */
export const GET = factory.createHandlers((c) => {
  const name = param(c, 'name');
  const event = c.var.store.events.get(param(c, 'ns'), name);
  if (!event) throw notFound('events', name);
  if (!wantsTable(c)) return c.json(event);
  const includeObject = parseIncludeObject(c.req.query('includeObject'));
  return c.json(
    eventTable([event], c.var.now(), { includeObject, resourceVersion: event.metadata.resourceVersion }),
  );
});
