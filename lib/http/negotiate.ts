import type { AppContext } from './env.ts';

/** Whether the client asked for a meta.k8s.io Table (kubectl's human-readable `get`). */
export function wantsTable(c: AppContext): boolean {
  const accept = c.req.header('accept') ?? '';
  return accept.split(',').some((part) => /;\s*as=Table/.test(part) && /g=meta\.k8s\.io/.test(part));
}

/** Discovery answers must not be cached by kubectl's disk cache across Outpost versions. */
export const NO_CACHE = { 'Cache-Control': 'no-cache, private' } as const;
