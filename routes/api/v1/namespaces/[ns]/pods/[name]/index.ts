import { factory } from '#lib/http/factory.ts';
import { wantsTable } from '#lib/http/negotiate.ts';
import { param } from '#lib/http/params.ts';
import { podTable } from '#lib/kube/printers/pods.ts';
import { notFound } from '#lib/kube/status.ts';
import { parseIncludeObject } from '#lib/kube/table.ts';

/** One pod: the stored spec with its latest status merged (a Table when kubectl asks for one). */
export const GET = factory.createHandlers((c) => {
  const name = param(c, 'name');
  const found = c.var.store.pods.getEncoded(param(c, 'ns'), name);
  if (!found) throw notFound('pods', name);
  const { pod, json } = found;
  if (wantsTable(c)) {
    const includeObject = parseIncludeObject(c.req.query('includeObject'));
    return c.json(
      podTable([pod], c.var.now(), { includeObject, resourceVersion: pod.metadata.resourceVersion }),
    );
  }
  return c.body(json, 200, { 'Content-Type': 'application/json' });
});
