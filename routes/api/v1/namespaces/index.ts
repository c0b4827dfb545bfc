import { factory } from '#lib/http/factory.ts';
import { wantsTable } from '#lib/http/negotiate.ts';
import { namespaceTable } from '#lib/kube/printers/namespaces.ts';
import { parseLabelSelector } from '#lib/kube/selectors.ts';
import { parseIncludeObject } from '#lib/kube/table.ts';
import { listNamespaces } from '#lib/store/namespaces.ts';

/** The namespaces that hold objects on this node, plus `default`. */
export const GET = factory.createHandlers((c) => {
  const labels = parseLabelSelector(c.req.query('labelSelector') ?? '');
  const items = listNamespaces(c.var.store).filter((ns) => labels.matches(ns.metadata.labels));
  const resourceVersion = String(c.var.store.rv.current);
  if (wantsTable(c)) {
    const includeObject = parseIncludeObject(c.req.query('includeObject'));
    return c.json(namespaceTable(items, c.var.now(), { includeObject, resourceVersion }));
  }
  return c.json({ kind: 'NamespaceList', apiVersion: 'v1', metadata: { resourceVersion }, items });
});
