import { factory } from '#lib/http/factory.ts';
import { unavailable } from '#lib/kube/status.ts';
import { listImages } from '#lib/pods/images/list.ts';

/** `GET /images`: the runtime's images, their size, pinned state and the metabase's pods using them. */
export const GET = factory.createHandlers(async (c) => {
  const { cri, store, shutdown } = c.var;
  if (!cri) throw unavailable('no container runtime is configured on this node');
  const items = await listImages(cri, store.pods.records(), shutdown);
  return c.json({ kind: 'ImageList', apiVersion: 'outpost.io/v1', items });
});
