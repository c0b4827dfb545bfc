// The node API's paths as kubelet has them: `{ns}/{pod}[/{uid}][/{container}]`; a uid that is not
// the pod's is a 404, as when a pod was recreated under the same name.
import type * as z from 'zod';
import { queryError } from '#lib/http/factory.ts';
import { notFound } from '#lib/kube/status.ts';
import type { Pod } from '#lib/kube/types.ts';
import { findPod, resolveContainer } from '#lib/pods/runtime/find-container.ts';
import type { NodeApiContext } from './env.ts';

/**
 * The pod a path names; a static pod's mirror pod (`<pod>-<node>`, the name the cloud shows)
 * resolves to the static pod itself, as kubelet resolves mirror pods.
 */
function podByName(c: NodeApiContext, ns: string, name: string): Pod {
  const suffix = `-${c.var.nodeName}`;
  if (name.endsWith(suffix) && !c.var.store.pods.get(ns, name)) {
    const rec = c.var.store.pods.record(ns, name.slice(0, -suffix.length));
    if (rec?.source === 'manifest') return findPod(c.var.store, ns, rec.name);
  }
  return findPod(c.var.store, ns, name);
}

/** The pod (and, when the path names one, the checked container) a node API path addresses. */
export function findPodByPath(c: NodeApiContext): { pod: Pod; container: string | undefined } {
  const name = c.req.param('pod') ?? '';
  const pod = podByName(c, c.req.param('ns') ?? '', name);
  const uid = c.req.param('uid');
  // A mirror pod's uid is the cloud's, not the static pod's: only a cloud pod's uid is checked.
  if (uid && uid !== pod.metadata.uid && pod.metadata.name === name) throw notFound('pods', name);
  const requested = c.req.param('container');
  return { pod, container: requested === undefined ? undefined : resolveContainer(pod, requested) };
}

/** The query decoded by `schema`, or the 400 Status naming the bad parameters. */
export function validQuery<T extends z.ZodType>(c: NodeApiContext, schema: T): z.output<T> {
  const q: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(c.req.queries())) q[k] = v.length === 1 ? v[0]! : v;
  const parsed = schema.safeParse(q);
  if (!parsed.success) throw queryError(parsed.error.issues);
  return parsed.data;
}
