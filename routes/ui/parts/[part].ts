import { allows } from '#lib/auth/roles.ts';
import { factory } from '#lib/http/factory.ts';
import { param } from '#lib/http/params.ts';
import { forbidden, notFound } from '#lib/kube/status.ts';
import { PARTS, type PartName, part } from '#lib/ui/page.tsx';

/** One dashboard section as HTML, for the page script to swap in after a change. The audit trail is for admins. */
export const GET = factory.createHandlers((c) => {
  const name = param(c, 'part') as PartName;
  if (!PARTS.includes(name)) throw notFound('parts', name);
  if (name === 'audit' && !allows(c.var.principal?.role ?? 'admin', 'admin'))
    throw forbidden('the audit trail needs role admin');
  return c.html(String(part(c, name)));
});
