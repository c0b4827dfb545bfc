// Imported first by the serve script (lib/cli/serve-script.ts), so that the light Headers, Request
// and Response are the globals before hono and @hono/node-server load (lib/http/fetch-classes.ts).
// OUTPOST_FETCH_CLASSES=node keeps Node's own.
import { installFetchClasses } from './fetch-classes.ts';

if (process.env.OUTPOST_FETCH_CLASSES !== 'node') installFetchClasses();
