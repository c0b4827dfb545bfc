import * as z from 'zod';
import { parseFieldSelector, parseLabelSelector } from '#lib/kube/selectors.ts';
import { badRequest, conflict, notFound } from '#lib/kube/status.ts';
import type { Pod } from '#lib/kube/types.ts';
import type { PodRecord } from '#lib/store/pods.ts';
import { isObject, readBody } from './body.ts';
import type { AppContext } from './env.ts';
import { coreList } from './list.ts';
import { podsResource } from './resources.ts';
import { dryRunOf, refuseForeign, timestamp } from './write-options.ts';

/** metav1.DeleteOptions, from the query string and the body (kubectl sends both). */
export interface DeleteOptions {
  gracePeriodSeconds?: number | undefined;
  preconditions?: { uid?: string | undefined; resourceVersion?: string | undefined } | undefined;
  propagationPolicy?: string | undefined;
  dryRun: boolean;
}

const bodySchema = z.object({
  gracePeriodSeconds: z.number().int().optional(),
  preconditions: z.object({ uid: z.string().optional(), resourceVersion: z.string().optional() }).optional(),
  propagationPolicy: z.string().optional(),
  orphanDependents: z.boolean().optional(),
  dryRun: z.array(z.string()).optional(),
});

const POLICIES = ['Orphan', 'Background', 'Foreground'];

/** The delete options of a call; a bad value is a 400 as the API server answers it. */
export async function deleteOptions(c: AppContext, from?: unknown): Promise<DeleteOptions> {
  let raw: unknown = from;
  if (raw === undefined && c.req.raw.body !== null) {
    const text = await c.req.text();
    raw = text.trim() ? await readBody(c) : undefined;
  }
  const parsed = bodySchema.safeParse(isObject(raw) ? raw : {});
  if (!parsed.success) throw badRequest(`invalid DeleteOptions: ${parsed.error.issues[0]?.message ?? ''}`);
  const body = parsed.data;
  const q = c.req.query('gracePeriodSeconds');
  if (q !== undefined && !/^-?\d+$/.test(q)) throw badRequest(`gracePeriodSeconds: invalid value "${q}"`);
  const policy = c.req.query('propagationPolicy') ?? body.propagationPolicy;
  if (policy !== undefined && !POLICIES.includes(policy)) {
    throw badRequest(
      `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan", "nil"`,
    );
  }
  return {
    gracePeriodSeconds: q !== undefined ? Number(q) : body.gracePeriodSeconds,
    preconditions: body.preconditions,
    propagationPolicy: policy,
    dryRun: dryRunOf(c, body),
  };
}

/**
 * Deletes one API pod: at once with a zero grace period, without a lifecycle manager, or when it
 * has finished; otherwise marked terminating for the lifecycle manager to stop and remove. Returns
 * the object as the API server does (the terminating pod, or its last state).
 */
export function deletePod(c: AppContext, rec: PodRecord, pod: Pod, opts: DeleteOptions): Pod {
  const { store } = c.var;
  refuseForeign('pods', rec.name, rec);
  const pre = opts.preconditions;
  if (pre?.uid && pre.uid !== rec.uid)
    throw conflict(`Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${rec.uid}`, {
      name: rec.name,
      kind: 'pods',
    });
  if (pre?.resourceVersion && pre.resourceVersion !== pod.metadata.resourceVersion) {
    throw conflict(
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${pod.metadata.resourceVersion}`,
      { name: rec.name, kind: 'pods' },
    );
  }
  const grace = Math.max(0, opts.gracePeriodSeconds ?? Number(pod.spec.terminationGracePeriodSeconds ?? 30));
  const finished = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
  const immediate = grace === 0 || finished || !c.var.cri;
  // Removed at once, the answer still carries the deletion marks with a zero grace period, as the
  // API server's (it marks every pod before it removes it).
  const removed = (): Pod => ({
    ...pod,
    metadata: { ...pod.metadata, deletionTimestamp: timestamp(c.var.now()), deletionGracePeriodSeconds: 0 },
  });
  if (opts.dryRun) {
    if (immediate) return removed();
    return {
      ...pod,
      metadata: {
        ...pod.metadata,
        deletionTimestamp: pod.metadata.deletionTimestamp ?? timestamp(c.var.now() + grace * 1000),
        deletionGracePeriodSeconds: grace,
      },
    };
  }
  if (immediate) {
    store.pods.remove(rec.namespace, rec.name);
    return removed();
  }
  store.pods.markDeleting(rec.namespace, rec.name, grace);
  return store.pods.get(rec.namespace, rec.name) ?? pod;
}

/** `DELETE` of one pod. */
export async function deleteOne(c: AppContext, namespace: string, name: string) {
  const opts = await deleteOptions(c);
  const rec = c.var.store.pods.record(namespace, name);
  const pod = rec && c.var.store.pods.get(namespace, name);
  if (!rec || !pod) throw notFound('pods', name);
  return c.json(deletePod(c, rec, pod, opts));
}

/**
 * `DELETE` of the pods collection (deletecollection) with label and field selectors. All or
 * nothing: when a matching pod belongs to a manifest or the cloud, nothing is deleted.
 */
export async function deleteCollection(c: AppContext, namespace: string) {
  const opts = await deleteOptions(c);
  const { store } = c.var;
  const r = podsResource(store);
  const labels = parseLabelSelector(c.req.query('labelSelector') ?? '');
  const fields = parseFieldSelector(
    c.req.query('fieldSelector') ?? '',
    r.fields as Record<string, (obj: unknown) => string | undefined>,
    'pods',
  );
  const matched = r
    .read(namespace, new Map())
    .items.filter((p) => labels.matches(p.metadata.labels) && fields.matches(p));
  const records = matched.map((p) => store.pods.record(namespace, p.metadata.name!)!);
  for (const rec of records) refuseForeign('pods', rec.name, rec);
  const items = store.metabase.sqlite.transaction(() =>
    matched.map((pod, i) => deletePod(c, records[i]!, pod, opts)),
  )();
  return c.json(coreList('PodList', store.rv.current, items));
}

/** `POST pods/{name}/eviction`: a delete with the Eviction's options (no disruption budgets on a node). */
export async function evictPod(c: AppContext, namespace: string, name: string) {
  const body = await readBody(c);
  if (!isObject(body)) throw badRequest('the body must be an Eviction object');
  const meta = isObject(body.metadata) ? body.metadata : {};
  if (meta.name !== undefined && meta.name !== name)
    throw badRequest(`name in URL does not match name in Eviction object`);
  const opts = await deleteOptions(c, isObject(body.deleteOptions) ? body.deleteOptions : {});
  const rec = c.var.store.pods.record(namespace, name);
  const pod = rec && c.var.store.pods.get(namespace, name);
  if (!rec || !pod) throw notFound('pods', name);
  deletePod(c, rec, pod, opts);
  return c.json({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }, 201);
}
