import { isDeepStrictEqual } from 'node:util';
import { recordUpdate } from '#lib/kube/managed-fields.ts';
import { invalid, notFound, type StatusCause, StatusError } from '#lib/kube/status.ts';
import { podSchema } from '#lib/kube/strategic-merge.ts';
import type { Pod } from '#lib/kube/types.ts';
import { checkDnsSubdomain } from '#lib/kube/validate.ts';
import { apiPodDefaults, defaultPod, validatePod } from '#lib/pods/spec/defaults.ts';
import type { PodRecord } from '#lib/store/pods.ts';
import { serverSideApply } from './apply.ts';
import { applyPatch, isObject, patchType, readBody } from './body.ts';
import type { AppContext } from './env.ts';
import {
  alreadyExists,
  checkNames,
  dryRunOf,
  fieldManagerOf,
  generatedName,
  modified,
  refuseForeign,
  timestamp,
} from './write-options.ts';

const SERVER_OWNED = [
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'generation',
  'selfLink',
] as const;

/** The body as a Pod, or 400 when it is not one. */
function asPod(body: unknown): Pod {
  if (!isObject(body)) throw new StatusError(400, 'BadRequest', 'the body must be a Pod object');
  if (body.kind !== undefined && body.kind !== 'Pod')
    throw new StatusError(400, 'BadRequest', `the body is a ${String(body.kind)}, not a Pod`);
  if (body.metadata === undefined) body.metadata = {};
  if (!isObject(body.metadata)) throw new StatusError(400, 'BadRequest', 'metadata must be an object');
  return body as unknown as Pod;
}

function validateOrThrow(pod: Pod, nodeName: string, extra: StatusCause[] = []): void {
  const causes = [...validatePod(pod), ...extra];
  if (pod.spec?.nodeName && pod.spec.nodeName !== nodeName) {
    causes.push({
      field: 'spec.nodeName',
      reason: 'FieldValueInvalid',
      message: `Invalid value: "${pod.spec.nodeName}": this API serves node "${nodeName}" only`,
    });
  }
  for (const [key, value] of Object.entries({
    labels: pod.metadata.labels,
    annotations: pod.metadata.annotations,
  })) {
    if (value === undefined) continue;
    if (!isObject(value) || Object.values(value).some((v) => typeof v !== 'string'))
      causes.push({
        field: `metadata.${key}`,
        reason: 'FieldValueTypeInvalid',
        message: 'must be a map of strings',
      });
  }
  if (causes.length) throw invalid('Pod', pod.metadata?.name ?? '', causes);
}

/** The served pod, or 404. */
function existing(c: AppContext, namespace: string, name: string): { rec: PodRecord; pod: Pod } {
  const rec = c.var.store.pods.record(namespace, name);
  const pod = rec && c.var.store.pods.get(namespace, name);
  if (!rec || !pod) throw notFound('pods', name);
  return { rec, pod };
}

/** `POST` of a pod: validated, defaulted as the API server does, stored (source=api) and run by the lifecycle manager. */
export async function createPod(c: AppContext, namespace: string) {
  const pod = asPod(await readBody(c));
  checkNames(pod.metadata, namespace);
  const dryRun = dryRunOf(c);
  return c.json(create(c, namespace, pod, dryRun, fieldManagerOf(c)), 201);
}

function create(
  c: AppContext,
  namespace: string,
  pod: Pod,
  dryRun: boolean,
  manager: string,
  applied = false,
): Pod {
  const { store, nodeName, now } = c.var;
  const config = applied ? structuredClone(pod) : undefined;
  for (const key of SERVER_OWNED) delete pod.metadata[key];
  delete pod.status;
  pod.metadata.namespace = namespace;
  if (!pod.metadata.name && typeof pod.metadata.generateName === 'string' && pod.metadata.generateName)
    pod.metadata.name = generatedName(pod.metadata.generateName);
  if (!pod.metadata.name) {
    throw invalid('Pod', '', [
      {
        field: 'metadata.name',
        reason: 'FieldValueRequired',
        message: 'Required value: name or generateName is required',
      },
    ]);
  }
  if (!isObject(pod.spec))
    throw invalid('Pod', pod.metadata.name, [
      { field: 'spec', reason: 'FieldValueRequired', message: 'Required value' },
    ]);
  if (Array.isArray(pod.spec.containers)) apiPodDefaults(defaultPod(pod, nodeName));
  validateOrThrow(pod, nodeName);
  if (store.pods.record(namespace, pod.metadata.name)) throw alreadyExists('pods', pod.metadata.name);
  pod.metadata.generation = 1;
  pod.metadata.creationTimestamp = timestamp(now());
  recordUpdate(undefined, pod, manager, applied ? 'Apply' : 'Update', now(), podSchema, config);
  if (dryRun) {
    pod.metadata.uid = crypto.randomUUID();
    pod.status = { phase: 'Pending', qosClass: 'BestEffort' };
    return pod;
  }
  store.pods.put(pod, 'api');
  return store.pods.get(namespace, pod.metadata.name)!;
}

/**
 * Stores `next` as the new desired state of an API pod: names, uid and resourceVersion
 * preconditions checked, server fields kept, spec changes limited to what a pod allows.
 */
function update(
  c: AppContext,
  rec: PodRecord,
  current: Pod,
  next: Pod,
  dryRun: boolean,
  manager: string,
  op: 'Update' | 'Apply',
): Pod {
  const { store, nodeName, now } = c.var;
  const { namespace, name } = rec;
  checkNames(next.metadata, namespace, name);
  if (next.metadata.resourceVersion && next.metadata.resourceVersion !== current.metadata.resourceVersion)
    throw modified('pods', name);
  if (next.metadata.uid && next.metadata.uid !== rec.uid) {
    throw new StatusError(
      409,
      'Conflict',
      `Precondition failed: UID in precondition: ${String(next.metadata.uid)}, UID in object meta: ${rec.uid}`,
      { name, kind: 'pods' },
    );
  }
  const old = rec.desired;
  next.metadata.name = name;
  next.metadata.namespace = namespace;
  for (const key of SERVER_OWNED) {
    if (old.metadata[key] === undefined) delete next.metadata[key];
    else (next.metadata as Record<string, unknown>)[key] = old.metadata[key];
  }
  delete next.status;
  if (isObject(next.spec) && Array.isArray(next.spec.containers)) apiPodDefaults(defaultPod(next, nodeName));
  validateOrThrow(next, nodeName, immutable(old, next));
  if (!isDeepStrictEqual(old.spec, next.spec)) next.metadata.generation = (old.metadata.generation ?? 1) + 1;
  recordUpdate(old, next, manager, op, now(), podSchema);
  if (dryRun)
    return {
      ...next,
      metadata: { ...next.metadata, resourceVersion: current.metadata.resourceVersion! },
      status: current.status!,
    };
  store.pods.put(next, 'api');
  return store.pods.get(namespace, name)!;
}

// What a pod update may change in spec (apiserver's ValidatePodUpdate): images, activeDeadlineSeconds,
// added tolerations; everything else is fixed once the pod exists.
function immutable(old: Pod, next: Pod): StatusCause[] {
  if (!isObject(next.spec)) return [];
  const strip = (p: Pod) => {
    const spec = structuredClone(p.spec) as Record<string, unknown> & Pod['spec'];
    for (const list of ['containers', 'initContainers'] as const)
      for (const ctr of (spec[list] ?? []) as { image?: string }[]) if (ctr) delete ctr.image;
    delete spec.activeDeadlineSeconds;
    delete spec.tolerations;
    return spec;
  };
  const causes: StatusCause[] = [];
  if (!isDeepStrictEqual(strip(old), strip(next))) {
    causes.push({
      field: 'spec',
      reason: 'FieldValueForbidden',
      message:
        'Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
    });
  }
  const oldTolerations = (old.spec.tolerations ?? []) as unknown[];
  const nextTolerations = (next.spec.tolerations ?? []) as unknown[];
  if (!oldTolerations.every((t) => nextTolerations.some((u) => isDeepStrictEqual(t, u)))) {
    causes.push({
      field: 'spec.tolerations',
      reason: 'FieldValueForbidden',
      message: 'Forbidden: existing toleration can not be modified except its tolerationSeconds',
    });
  }
  return causes;
}

/** `PUT` of a pod (kubectl replace): the whole desired object. */
export async function replacePod(c: AppContext, namespace: string, name: string) {
  const next = asPod(await readBody(c));
  const dryRun = dryRunOf(c);
  const { rec, pod } = existing(c, namespace, name);
  refuseForeign('pods', name, rec);
  return c.json(update(c, rec, pod, next, dryRun, fieldManagerOf(c), 'Update'));
}

/**
 * `PATCH` of a pod: merge, strategic merge (kubectl edit, label, annotate, apply), JSON patch, or
 * server-side apply (`kubectl apply --server-side`), which also creates a missing pod.
 */
export async function patchPod(c: AppContext, namespace: string, name: string) {
  const type = patchType(c, ['json', 'merge', 'strategic', 'apply']);
  const patch = await readBody(c);
  const dryRun = dryRunOf(c);
  if (type === 'apply') {
    let rec: PodRecord | undefined;
    return serverSideApply(c, asPod(patch), namespace, name, podSchema, {
      current() {
        rec = c.var.store.pods.record(namespace, name);
        if (!rec) return undefined;
        refuseForeign('pods', name, rec);
        return c.var.store.pods.get(namespace, name)!;
      },
      create: (config, manager) => c.json(create(c, namespace, config, dryRun, manager, true), 201),
      update: (current, next, manager) => c.json(update(c, rec!, current, next, dryRun, manager, 'Apply')),
    });
  }
  const manager = c.req.query('fieldManager') ?? fieldManagerOf(c);
  const { rec, pod } = existing(c, namespace, name);
  refuseForeign('pods', name, rec);
  const next = asPod(applyPatch(pod, type, patch, podSchema));
  return c.json(update(c, rec, pod, next, dryRun, manager, 'Update'));
}

/** `PATCH`/`PUT` of `pods/{name}/status`: only the status changes; it merges like the lifecycle manager's own patches. */
export async function patchPodStatus(c: AppContext, namespace: string, name: string, replace: boolean) {
  const type = replace ? undefined : patchType(c, ['json', 'merge', 'strategic']);
  const body = await readBody(c);
  const dryRun = dryRunOf(c);
  const { rec, pod } = existing(c, namespace, name);
  refuseForeign('pods', name, rec);
  const next = type ? asPod(applyPatch(pod, type, body, podSchema)) : asPod(body);
  if (next.metadata.resourceVersion && next.metadata.resourceVersion !== pod.metadata.resourceVersion)
    throw modified('pods', name);
  if (!isObject(next.status))
    throw invalid('Pod', name, [
      { field: 'status', reason: 'FieldValueRequired', message: 'Required value' },
    ]);
  if (dryRun) return c.json({ ...pod, status: next.status });
  c.var.store.pods.setStatus(rec.uid, next.status);
  return c.json(c.var.store.pods.get(namespace, name)!);
}

/** Checks a name given in a URL before it reaches the store. */
export function checkName(name: string): void {
  const causes = checkDnsSubdomain(name, 'metadata.name');
  if (causes.length) throw invalid('Pod', name, causes);
}
