import type { NodeApiContext } from '../env.ts';

/** `GET /healthz`: `ok` while the node API serves. */
export const GET = (c: NodeApiContext) => c.text('ok');
