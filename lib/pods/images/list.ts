import type { CriClient } from '#lib/cri/client.ts';
import type { Image } from '#lib/cri/types.ts';
import { compareGoStrings } from '#lib/kube/order.ts';
import type { PodRecord } from '#lib/store/pods.ts';

/** One image of the runtime, as `GET /images` answers it. */
export interface ImageItem {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  /** Bytes. */
  size: number;
  /** The runtime's pinned flag (containerd ≥ 1.7: the sandbox image and `io.cri-containerd.pinned=pinned`). */
  pinned: boolean;
  /** `namespace/name` of every pod in the metabase whose containers name this image. */
  usedBy: string[];
}

/** The images a pod's containers (init containers included) name. */
const podImages = (rec: PodRecord): string[] =>
  [...(rec.desired.spec?.initContainers ?? []), ...(rec.desired.spec?.containers ?? [])]
    .map((c) => c.image ?? '')
    .filter(Boolean);

/**
 * The runtime's images with the pods of the metabase that use them. A pod's image reference is
 * resolved by the runtime (ImageStatus), so `busybox` finds `docker.io/library/busybox:latest`.
 * `signal` (the agent's shutdown) cancels the runtime calls: a 503.
 */
export async function listImages(
  cri: CriClient,
  pods: PodRecord[],
  signal?: AbortSignal,
): Promise<ImageItem[]> {
  const images = await cri.listImages(undefined, signal);
  const users = new Map<string, Set<string>>();
  const refs = new Map<string, string[]>();
  for (const rec of pods) {
    for (const ref of podImages(rec))
      refs.set(ref, [...(refs.get(ref) ?? []), `${rec.namespace}/${rec.name}`]);
  }
  for (const [ref, names] of refs) {
    const found: Image | null = await cri.imageStatus(ref, signal).catch((e: unknown) => {
      if (signal?.aborted) throw e;
      return null;
    });
    if (!found) continue;
    const set = users.get(found.id) ?? new Set<string>();
    for (const n of names) set.add(n);
    users.set(found.id, set);
  }
  return images
    .map((img) => ({
      id: img.id,
      repoTags: img.repoTags,
      repoDigests: img.repoDigests,
      size: Number(img.size),
      pinned: img.pinned,
      usedBy: [...(users.get(img.id) ?? [])].sort(),
    }))
    .sort((a, b) => compareGoStrings(a.repoTags[0] ?? a.id, b.repoTags[0] ?? b.id));
}
