import { factory } from '#lib/http/factory.ts';
import { UI_COOKIE } from '#lib/http/guard.ts';

/** Forgets the dashboard's token cookie. */
export const POST = factory.createHandlers((c) => {
  c.header('set-cookie', `${UI_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`);
  return c.redirect('/ui/login', 303);
});
