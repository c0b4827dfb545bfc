import * as z from 'zod';
import { importArchive } from '#lib/cri/import-archive.ts';
import { body, factory } from '#lib/http/factory.ts';
import { unavailable } from '#lib/kube/status.ts';

const loadBody = z.object({ path: z.string().min(1).max(4096) });

/**
 * `POST /images/load` `{"path": "/media/usb/app.tar"}`: imports an image archive that is on the node
 * (docker save, ctr export, OCI layout tar) into containerd, for nodes that get software by hand.
 */
export const POST = factory.createHandlers(body(loadBody, 'ImageLoad'), async (c) => {
  const { cri } = c.var;
  if (!cri) throw unavailable('no container runtime is configured on this node');
  const { path } = c.req.valid('json');
  c.set('auditDetail', { path });
  const images = await importArchive(cri.endpoint, path);
  return c.json({ kind: 'ImageLoadResult', apiVersion: 'outpost.io/v1', path, images });
});
