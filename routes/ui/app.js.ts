import { factory } from '#lib/http/factory.ts';
import { APP_JS } from '#lib/ui/script.ts';

/** The dashboard's script (public: it holds no data). */
export const GET = factory.createHandlers((c) =>
  c.body(APP_JS, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' }),
);
