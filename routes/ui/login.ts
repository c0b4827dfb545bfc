import { identify } from '#lib/auth/authenticate.ts';
import { factory } from '#lib/http/factory.ts';
import { UI_COOKIE } from '#lib/http/guard.ts';
import { loginPage } from '#lib/ui/page.tsx';

/** The token sign-in form (public). */
export const GET = factory.createHandlers((c) => c.html(`<!doctype html>${loginPage()}`));

/** Checks the token and keeps it in an HttpOnly, SameSite=Strict cookie; then on to the dashboard. */
export const POST = factory.createHandlers(async (c) => {
  const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
  const token = typeof form.token === 'string' ? form.token.trim() : '';
  let ok = false;
  try {
    ok = !!token && !!identify({ authorization: `Bearer ${token}` }, c.var.auth);
  } catch {
    ok = false;
  }
  // The form again, with the reason (a page for a person, not a Status for a client).
  if (!ok) return c.html(`<!doctype html>${loginPage('That token is not valid here.')}`);
  const secure = new URL(c.req.url).protocol === 'https:' ? '; Secure' : '';
  c.header(
    'set-cookie',
    `${UI_COOKIE}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=2592000${secure}`,
  );
  return c.redirect('/ui/', 303);
});
