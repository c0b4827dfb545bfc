import { factory } from '#lib/http/factory.ts';
import { wantsTable } from '#lib/http/negotiate.ts';
import { describeNode } from '#lib/http/node.ts';
import { param } from '#lib/http/params.ts';
import { passThrough } from '#lib/http/passthrough.ts';
import { nodeTable } from '#lib/kube/printers/nodes.ts';
import { notFound } from '#lib/kube/status.ts';
import { parseIncludeObject } from '#lib/kube/table.ts';

/** Any node of the cluster while the cloud link is online; offline or standalone this node (others 404). */
export const GET = factory.createHandlers(async (c) => {
  const forwarded = c.var.cloud?.link.online ? await passThrough(c) : undefined;
  if (forwarded) return forwarded;
  const name = param(c, 'name');
  if (name !== c.var.nodeName) throw notFound('nodes', name);
  const node = await describeNode(c);
  if (!wantsTable(c)) return c.json(node);
  const includeObject = parseIncludeObject(c.req.query('includeObject'));
  return c.json(
    nodeTable([node], c.var.now(), { includeObject, resourceVersion: node.metadata.resourceVersion }),
  );
});
