import * as z from 'zod';
import { factory, query } from '#lib/http/factory.ts';

const auditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(10_000).optional(),
  user: z.string().max(128).optional(),
});

/** `GET /audit`: the newest mutating calls (restart, exec, device edit): who, what, when, result. */
export const GET = factory.createHandlers(query(auditQuery), (c) => {
  const q = c.req.valid('query');
  const items = c.var.store.audit.list({ limit: q.limit ?? 100, user: q.user });
  return c.json({ kind: 'AuditList', apiVersion: 'outpost.io/v1', items });
});
