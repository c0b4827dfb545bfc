import { factory } from '#lib/http/factory.ts';
import { wantsTable } from '#lib/http/negotiate.ts';
import { param } from '#lib/http/params.ts';
import { namespaceTable } from '#lib/kube/printers/namespaces.ts';
import { notFound } from '#lib/kube/status.ts';
import { parseIncludeObject } from '#lib/kube/table.ts';
import { listNamespaces } from '#lib/store/namespaces.ts';

/** One namespace, if any object on this node lives in it (`default` always does). */
export const GET = factory.createHandlers((c) => {
  const name = param(c, 'ns');
  const ns = listNamespaces(c.var.store).find((n) => n.metadata.name === name);
  if (!ns) throw notFound('namespaces', name);
  if (wantsTable(c)) {
    const includeObject = parseIncludeObject(c.req.query('includeObject'));
    return c.json(namespaceTable([ns], c.var.now(), { includeObject }));
  }
  return c.json(ns);
});
