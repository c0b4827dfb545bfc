import { factory, query } from '#lib/http/factory.ts';
import { listOrWatch, listQuery } from '#lib/http/list.ts';
import { describeNode } from '#lib/http/node.ts';
import { passThrough } from '#lib/http/passthrough.ts';
import type { Node } from '#lib/kube/printers/nodes.ts';
import { nodeTable } from '#lib/kube/printers/nodes.ts';

/** List or watch the nodes: the cluster's while the cloud link is online, else this one. */
export const GET = factory.createHandlers(query(listQuery), async (c) => {
  const forwarded = c.var.cloud?.link.online ? await passThrough(c) : undefined;
  if (forwarded) return forwarded;
  const node = await describeNode(c);
  return listOrWatch<Node>(
    c,
    {
      resource: 'nodes',
      listKind: 'NodeList',
      fields: { 'metadata.name': (n) => n.metadata.name },
      read: () => ({ items: [node], resourceVersion: c.var.store.rv.current }),
      table: (items, now, opts) => nodeTable(items, now, opts),
    },
    undefined,
    c.req.valid('query'),
  );
});
