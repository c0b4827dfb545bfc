// `outpost images load`: containerd's import, through its own client `ctr`. containerd's gRPC API
// has no import call: importing is client work (read the archive, write each blob through the
// content service, create the image records, unpack the layers through the snapshotter), done by
// containerd's Go client, which ctr is. ctr ships with containerd (Debian's package included).
import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { badRequest, internal, unavailable } from '#lib/kube/status.ts';

/** The CRI plugin's containerd namespace: what it pulls and runs lives there. */
export const CRI_NAMESPACE = 'k8s.io';

/** What ctr writes when the file is not an image archive (captured from ctr 1.6.20). */
const NOT_AN_ARCHIVE = /unrecognized image format|unexpected EOF|archive\/tar|invalid tar header/;

/**
 * Imports an image archive (`docker save`, `ctr images export`, an OCI layout tar) on the node into
 * containerd's CRI namespace; returns the names it imported. Errors are Status errors: a missing
 * file or one that is not an archive is the caller's mistake (400), a runtime that is not a
 * containerd on a unix socket or a missing ctr is 503.
 */
export async function importArchive(endpoint: string, path: string, ctr = 'ctr'): Promise<string[]> {
  if (!path.startsWith('/')) throw badRequest(`image archive path must be absolute, got "${path}"`);
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw badRequest(`image archive "${path}" is not a file`);
    size = st.size;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw badRequest(`image archive "${path}" not found on the node`);
    throw e;
  }
  if (size === 0) throw badRequest(`"${path}" is not an image archive: the file is empty`);
  const socket = endpoint.startsWith('unix://') ? endpoint.slice('unix://'.length) : undefined;
  if (!socket)
    throw unavailable(`image import needs containerd on a unix socket; the runtime endpoint is ${endpoint}`);
  const args = ['--address', socket, '--namespace', CRI_NAMESPACE, 'images', 'import', path];
  const out = await new Promise<string>((resolve, reject) =>
    execFile(ctr, args, { maxBuffer: 4 << 20, timeout: 600_000 }, (err, stdout, stderr) => {
      if (!err) return resolve(stdout);
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        return reject(unavailable(`image import needs containerd's ctr on PATH: ${ctr} not found`));
      const text = (stderr || err.message).trim().replace(/^ctr: /, '');
      if (NOT_AN_ARCHIVE.test(text))
        return reject(
          badRequest(
            `"${path}" is not an image archive (docker save, ctr export or OCI layout tar): ${text}`,
          ),
        );
      if (/connection refused|no such file or directory|context deadline exceeded/.test(text))
        return reject(unavailable(`container runtime at ${endpoint} is unavailable: ${text}`));
      reject(internal(`ctr images import ${path}: ${text}`));
    }),
  );
  // ctr prints `unpacking NAME (sha256:...)...done` per image it imported.
  return [...out.matchAll(/^unpacking (\S+) \(/gm)].map((m) => m[1]!);
}
