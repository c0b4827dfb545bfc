import { identify } from '#lib/auth/authenticate.ts';
import { factory } from '#lib/http/factory.ts';
import { inClearFromAfar, UI_COOKIE } from '#lib/http/guard.ts';
import { loginPage } from '#lib/ui/page.tsx';

// The admin token must not cross the network in clear, in the form or in the cookie that then rides
// along with every request: from another machine, sign-in happens over https (the same port
// answers both; the certificate is signed by DATA_DIR/auth/ca.crt).
const overHttps = (url: string) => {
  const u = new URL(url);
  u.protocol = 'https:';
  return u.toString();
};

/** The token sign-in form (public); over https when the browser is on another machine. */
export const GET = factory.createHandlers((c) =>
  inClearFromAfar(c.env, c.req.url)
    ? c.redirect(overHttps(c.req.url), 308)
    : c.html(`<!doctype html>${loginPage()}`),
);

/** Checks the token and keeps it in an HttpOnly, SameSite=Strict cookie; then on to the dashboard. */
export const POST = factory.createHandlers(async (c) => {
  if (inClearFromAfar(c.env, c.req.url))
    return c.html(
      `<!doctype html>${loginPage(`Sign in over https, so the token does not cross the network in clear: ${overHttps(c.req.url)}`)}`,
      400,
    );
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
