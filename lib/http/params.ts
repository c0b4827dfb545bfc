import type { AppContext } from './env.ts';

/** A path parameter the route pattern guarantees (`:ns`, `:name`), decoded. */
export function param(c: AppContext, name: string): string {
  return c.req.param(name) ?? '';
}
