import { factory } from '#lib/http/factory.ts';
import { dashboard } from '#lib/ui/page.tsx';

/** The dashboard (served at `/ui/`; `/ui` redirects there). Viewers and up, as the API. */
export const GET = factory.createHandlers((c) =>
  c.req.path === '/ui' ? c.redirect('/ui/', 301) : c.html(`<!doctype html>${dashboard(c)}`),
);
