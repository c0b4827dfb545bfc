import { factory } from '#lib/http/factory.ts';
import { wantsTable } from '#lib/http/negotiate.ts';
import { describeNode } from '#lib/http/node.ts';
import { param } from '#lib/http/params.ts';
import { nodeTable } from '#lib/kube/printers/nodes.ts';
import { notFound } from '#lib/kube/status.ts';
import { parseIncludeObject } from '#lib/kube/table.ts';

/** This node (any other name is 404). */
export const GET = factory.createHandlers(async (c) => {
  const name = param(c, 'name');
  if (name !== c.var.nodeName) throw notFound('nodes', name);
  const node = await describeNode(c);
  if (!wantsTable(c)) return c.json(node);
  const includeObject = parseIncludeObject(c.req.query('includeObject'));
  return c.json(
    nodeTable([node], c.var.now(), { includeObject, resourceVersion: node.metadata.resourceVersion }),
  );
});
